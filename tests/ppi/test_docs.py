"""docs/human_sample.md quotes the simulation's headline table verbatim: every
``<!-- generated: PATH -->`` block equals the file at PATH (written by benchmarks/human_sample.py; regenerate and
paste, never edit by hand), and that file is the one the simulation's JSON gives."""

from __future__ import annotations

import json
import re
from types import ModuleType

from support.helpers import REPO

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)
HEADLINE = "docs/generated/human_sample_headline.md"


def test_the_docs_quote_the_simulations_headline() -> None:
    for doc in ("docs/human_sample.md",):
        blocks = dict(BLOCK.findall((REPO / doc).read_text(encoding="utf-8")))
        assert HEADLINE in blocks, f"{doc} does not quote {HEADLINE}"
        assert blocks[HEADLINE].strip() == (REPO / HEADLINE).read_text(encoding="utf-8").strip(), (
            f"{doc} quotes {HEADLINE} out of date (rerun benchmarks/human_sample.py and paste)")


def test_the_headline_is_what_the_simulations_numbers_give(bench: ModuleType) -> None:
    data = json.loads((REPO / "docs" / "generated" / "human_sample_simulation.json").read_text(encoding="utf-8"))
    assert bench.headline(data["rows"], data["meta"]) == (REPO / HEADLINE).read_text(encoding="utf-8")
