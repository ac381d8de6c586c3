"""The common model of bank conversions: raw records as read, the report of what was dropped, and assembling a
:class:`~autograde.io.banks.read.Bank` from raw records (ids from the text, empty and repeated texts and unknown queries
dropped, each drop with its ``file:line`` and reason).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from autograde.core.errors import AutogradeError, Problems
from autograde.core.ids import item_id
from autograde.io.banks.model import Bank, BankItem


class FormatError(AutogradeError, ValueError):
    """A file is not in the format it was read as (or its format cannot be told)."""


@dataclass(frozen=True)
class Dropped:
    """One thing left out of a conversion: where it was, what it was, why."""

    where: str
    what: str
    reason: str


@dataclass
class ConversionReport:
    """What an import or export kept, dropped (and why) and noticed.

    ``strict`` (the workflow's reading of a bank): nothing is dropped or fixed up silently; every such case is a
    problem naming the file, line and fix in ``problems`` instead. Lenient (the conversion tools): the thing is
    left out and counted by reason.
    """

    source: str
    format: str
    queries: int = 0
    items: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    notes: Counter = field(default_factory=Counter)
    strict: bool = False
    problems: Problems = field(default_factory=Problems)

    def drop(self, where: str, what: str, reason: str) -> None:
        self.dropped.append(Dropped(where, what, reason))

    def reject(self, where: str, what: str, reason: str, message: str, fix: str) -> None:
        """Something unusable: a problem (``message``, ``fix``) when strict, else dropped for ``reason``."""
        if self.strict:
            path, line = split_where(where)
            self.problems.add(path, line, message, fix)
        else:
            self.drop(where, what, reason)

    def tolerate(self, where: str, note: str, message: str, fix: str) -> None:
        """Something a lenient reading fixes up (and notes); a problem when strict."""
        if self.strict:
            path, line = split_where(where)
            self.problems.add(path, line, message, fix)
        else:
            self.notes[note] += 1

    def reasons(self) -> dict[str, int]:
        """Dropped things per reason."""
        return dict(Counter(d.reason for d in self.dropped))

    def lines(self, examples: int = 3) -> list[str]:
        """A human summary: counts, then each reason with its count and a few examples (file:line)."""
        out = [f"{self.source} ({self.format}): kept {self.items} item(s) of {self.queries} query(ies); "
               f"dropped {len(self.dropped)}"]
        for reason, n in sorted(self.reasons().items(), key=lambda kv: -kv[1]):
            shown = [d for d in self.dropped if d.reason == reason][:examples]
            out.append(f"  dropped {n}: {reason}")
            out.extend(f"    {d.where}: {d.what}" for d in shown)
        out.extend(f"  note: {note} ({n})" for note, n in sorted(self.notes.items()))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "queries": self.queries, "items": self.items,
                "dropped": len(self.dropped), "dropped_by_reason": self.reasons(), "notes": dict(self.notes),
                "dropped_items": [d.__dict__ for d in self.dropped]}


@dataclass
class RawItem:
    """An item as read, before checks."""

    text: Any
    kind: str
    where: str
    gold: Any = ()
    facet: Any = None
    info: dict[str, Any] | None = None
    given_id: Any = None


@dataclass
class RawQuery:
    """A query's line (or lesson, or bank) as read, before checks."""

    query_id: str
    header: dict[str, Any]
    items: list[RawItem]
    where: str


def split_where(where: str) -> tuple[str, int | None]:
    """``("file", 12)`` of a ``file:12 (item 3)`` location (``None`` when it names no line)."""
    m = re.match(r"^(.*?):(\d+)(?:\s.*)?$", where)
    return (m.group(1), int(m.group(2))) if m else (where, None)


def _short(text: Any, n: int = 60) -> str:
    s = text if isinstance(text, str) else repr(text)
    return s if len(s) <= n else s[: n - 3] + "..."


# --------------------------------------------------------------------------------------------------------------
# Assembling a bank from raw queries (shared by every reader).


def assemble(raw: list[RawQuery], report: ConversionReport, queries: dict[str, str] | None = None,
             queries_source: str = "the queries file") -> Bank:
    """Check raw items and build the bank: ids from text; empty, repeated or malformed items and unknown queries
    are dropped (lenient) or problems (``report.strict``)."""
    bank = Bank()
    seen: dict[str, dict[str, str]] = {}
    wheres: dict[str, str] = {}
    for rq in raw:
        qid = rq.query_id
        if queries is not None and qid not in queries:
            report.reject(rq.where, f"query {qid!r} ({len(rq.items)} item(s))", f"query not in {queries_source}",
                          f"test bank has items for query {qid!r}, which is not in {queries_source}",
                          "fix the query id or add the query")
            continue
        if qid in bank.headers:
            first = split_where(wheres[qid])[1]
            report.tolerate(rq.where, f"query lines merged (a query on two lines, e.g. {qid!r})",
                            f"query {qid!r} appears on two lines (first on line {first})", "merge its items into one line")
            if report.strict:
                continue
        else:
            bank.headers[qid] = dict(rq.header)
            wheres[qid] = rq.where
            line = split_where(rq.where)[1]
            if line is not None:
                bank.lines[qid] = line
        ids = seen.setdefault(qid, {})
        for j, it in enumerate(rq.items):
            item = _assemble_item(qid, j, it, ids, report)
            if item is not None:
                bank.items.append(item)
    with_items = {i.query_id for i in bank.items}
    for qid in [q for q in bank.headers if q not in with_items]:
        if not report.strict:
            report.drop(wheres[qid], f"query {qid!r}", "no items left")
            del bank.headers[qid]
    report.queries = len(with_items)
    report.items = len(bank.items)
    return bank


def _assemble_item(qid: str, j: int, it: RawItem, ids: dict[str, str], report: ConversionReport) -> BankItem | None:
    """One checked item (None if it is left out)."""
    what = f"query {qid!r} item {_short(it.text)!r}"
    kind_key = "nugget_text" if it.kind == "nugget" else "question_text"
    if not isinstance(it.text, str):
        report.reject(it.where, what, "text is not a string",
                      f"item {j} of query {qid!r}: {kind_key} must be a string, got {type(it.text).__name__}",
                      f'write "{kind_key}": "..." in quotes')
        return None
    text = it.text.strip()
    if not text:
        report.reject(it.where, f"query {qid!r} item {it.given_id or ''}".strip(), "empty text",
                      f"item {j} of query {qid!r} has empty text", "remove the item or give it text")
        return None
    facet = None
    if it.facet is not None:
        if isinstance(it.facet, str | int) and not isinstance(it.facet, bool):
            facet = str(it.facet)
        else:
            report.tolerate(it.where, "facet ids that are not text or a number dropped",
                            f"facet_id of item {j} of query {qid!r} must be a string", "write the facet id as a string")
            if report.strict:
                return None
    iid = item_id(qid, text, facet)
    if iid in ids:
        report.reject(it.where, what, "repeats the text of an earlier item of the query",
                      f"item {j} repeats the text of an earlier item of query {qid!r}: {text[:60]!r}",
                      "remove the duplicate item (ids are md5 of the text)")
        return None
    if isinstance(it.given_id, str) and it.given_id and it.given_id != iid:
        report.notes["item ids recomputed from the text (query_id/md5(text))"] += 1
    gold = it.gold if it.gold is not None else ()
    if isinstance(gold, str):
        report.tolerate(it.where, "gold answers given as one string read as a list of one",
                        f"gold_answers of item {j} of query {qid!r} must be a list of strings, got str",
                        'write "gold_answers": ["answer", ...]')
        if report.strict:
            return None
        gold = [gold]
    if not isinstance(gold, list | tuple) or not all(isinstance(g, str) for g in gold):
        report.reject(it.where, f"gold answers of {what}", "gold answers are not a list of strings",
                      f"gold_answers of item {j} of query {qid!r} must be a list of strings, got {type(gold).__name__}",
                      'write "gold_answers": ["answer", ...]')
        if report.strict:
            return None
        gold = ()
    ids[iid] = text
    kept = tuple(g for g in gold if report.strict or g.strip())  # strict: exactly as written (a faithful round trip)
    return BankItem(iid, qid, it.kind, text, kept, facet, it.info or None)
