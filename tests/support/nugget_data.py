"""Nuggets and a second RAG run for the tiny dataset (tests/support/mini.py), and the writer of a nugget bank."""

from __future__ import annotations

import json
from pathlib import Path

from autograde.core.ids import item_id

NUGGETS = {  # query -> [(text, importance)]; q2 has no vital nugget
    "q1": [("Bees collect nectar from flowers", "vital"), ("Bees fan nectar until it thickens", "okay")],
    "q2": [("The moon's gravity causes tides", "okay"), ("The sun also pulls on the oceans", "okay")],
    "q3": [("Sourdough rises thanks to a wild yeast starter", "vital"), ("It is baked hot in a Dutch oven", "vital")],
}
MORE_ANSWERS = [  # a second RAG run; q3 is answered by it only
    {"query_id": "q1", "run": "gen2", "text": "Honey comes from nectar that bees collect and dry by fanning."},
    {"query_id": "q2", "run": "gen2", "text": "Tides come from the pull of the moon and, less, the sun."},
    {"query_id": "q3", "run": "gen2", "text": "A starter of wild yeast leavens the dough; bake it very hot."},
]


def write_nugget_bank(path: Path, nuggets: dict[str, list[tuple[str, str]]]) -> None:
    path.write_text("".join(json.dumps({"query_id": q, "items": [
        {"query_id": q, "nugget_id": item_id(q, t), "nugget_text": t, "info": {"importance": imp}} for t, imp in items]})
        + "\n" for q, items in nuggets.items()))
