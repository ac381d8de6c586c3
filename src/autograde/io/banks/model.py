"""The test bank's data model and its writer: items (exam questions or nuggets) grouped by query, written in the
Rubric-Grading Workbench's JSONL(.gz) format.

One line per query: ``{"query_id", "test_collection", "query_text", "info", "items": [...]}`` where items are
``{"query_id", "question_id", "question_text"[, "gold_answers", "facet_id", "info"]}`` or the same with
``nugget_*``. Item ids are ``query_id/md5(text.strip())`` (:func:`autograde.core.ids.item_id`). Reading is
:func:`autograde.io.banks.read.read_bank` (strict, the workflow's) and :func:`autograde.io.banks.formats.import_bank`
(every format, lenient: drops reported); both parse workbench lines with
:func:`autograde.io.banks.readers.read_workbench`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.text import atomic_write_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BANK_COLUMNS", "Bank", "BankItem", "bank_lines", "item_fields", "write_bank"]

BANK_COLUMNS = ["item_id", "query_id", "kind", "text", "gold_answers", "facet_id"]


@dataclass(frozen=True)
class BankItem:
    """One exam question or nugget."""

    item_id: str
    query_id: str
    kind: str  # "question" | "nugget"
    text: str
    gold_answers: tuple[str, ...] = ()
    facet_id: str | None = None
    info: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    """Other data of the item (e.g. a nugget's importance); kept on write-back, never part of its identity."""


@dataclass
class Bank:
    """A whole test bank; ``headers`` keep each query line's other fields for a faithful write-back."""

    items: list[BankItem] = field(default_factory=list)
    headers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """query id -> the other fields of its line, in their order (an ``items`` key marks where the items go)."""
    lines: dict[str, int] = field(default_factory=dict)
    """query id -> line number in the file it was read from (for messages)."""

    def by_query(self) -> dict[str, list[BankItem]]:
        out: dict[str, list[BankItem]] = {}
        for it in self.items:
            out.setdefault(it.query_id, []).append(it)
        return out

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [(i.item_id, i.query_id, i.kind, i.text, list(i.gold_answers), i.facet_id) for i in self.items],
            columns=BANK_COLUMNS,
        )


def item_fields(raw: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(kind, text, given id) of a workbench bank item: a question or a nugget; None if it is neither."""
    if "question_text" in raw:
        return "question", raw["question_text"], raw.get("question_id")
    if "nugget_text" in raw:
        return "nugget", raw["nugget_text"], raw.get("nugget_id")
    return None


def bank_lines(bank: Bank, test_collection: str = "autograde") -> list[str]:
    """The workbench-format lines of a bank (one per query with items, in the bank's order)."""
    lines = []
    for qid, items in bank.by_query().items():
        header = dict(bank.headers.get(qid, {"query_id": qid, "test_collection": test_collection}))
        out_items = []
        for it in items:
            key = "question" if it.kind == "question" else "nugget"
            rec: dict[str, Any] = {"query_id": qid, f"{key}_id": it.item_id, f"{key}_text": it.text}
            if it.gold_answers:
                rec["gold_answers"] = list(it.gold_answers)
            if it.facet_id:
                rec["facet_id"] = it.facet_id
            if it.info:
                rec["info"] = it.info
            out_items.append(rec)
        header["items"] = out_items
        lines.append(json.dumps(header, ensure_ascii=False) + "\n")
    return lines


def write_bank(path: str | Path, bank: Bank, test_collection: str = "autograde") -> None:
    """Write a bank in the workbench format (``.gz`` compressed if the name says so), atomically."""
    atomic_write_text(path, "".join(bank_lines(bank, test_collection)))
