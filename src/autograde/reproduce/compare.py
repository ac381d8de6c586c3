"""Paper values next to the tool's: one :class:`Cell` per (table, row, column), and the Markdown index.

A cell's ``outcome`` is one of: ``same`` (within the table's tolerance), ``differs`` (the ``why`` line says
why), ``ours only`` (the paper prints no value), ``not computed by this version`` (the paper YAML names a
row the tool does not measure), ``not reproducible from public data``, or the table's own state
(``input missing: ...``, ``error: ...``, ``not built``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from autograde.reproduce.measured import Measurement, Value
from autograde.reproduce.papers import PaperFile, PaperTable

__all__ = ["Cell", "TableComparison", "compare_paper", "fmt_value", "index_json", "index_markdown"]

SAME, DIFFERS, OURS_ONLY = "same", "differs", "ours only"
NOT_COMPUTED = "not computed by this version"
NOT_PUBLIC = "not reproducible from public data"


@dataclass
class Cell:
    """One compared value."""

    row: str
    column: str
    paper: float | None
    ours: float | None
    sd: float | None
    n: int | None
    outcome: str
    difference: float | None = None
    why: str = ""
    measured_row: str | None = None


@dataclass
class TableComparison:
    """One paper table against its measurement."""

    paper: str
    table: PaperTable
    state: str
    """``ok``, ``input missing: ...``, ``error: ...``, ``not built``, or :data:`NOT_PUBLIC`."""
    cells: list[Cell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inputs: dict[str, str] = field(default_factory=dict)
    seconds: float | None = None
    short: str = ""
    """The paper's short name (summary table)."""

    def short_state(self) -> str:
        """The state without its details (``input missing``, ``error``, ``not built``)."""
        return self.state.split(":", 1)[0]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cells:
            key = c.outcome if c.outcome in (SAME, DIFFERS, OURS_ONLY, NOT_COMPUTED) else "not available"
            out[key] = out.get(key, 0) + 1
        return out


def _compare(row: str, column: str, paper: float | None, value: Value | None, table: PaperTable, why: str,
             measured_row: str | None) -> Cell:
    if value is None:
        return Cell(row, column, paper, None, None, None, NOT_COMPUTED, why="", measured_row=measured_row)
    ours = None if math.isnan(value.value) else value.value
    cell = Cell(row, column, paper, ours, value.sd, value.n, OURS_ONLY, measured_row=measured_row)
    if paper is None or ours is None:
        return cell
    cell.difference = ours - paper
    same = abs(cell.difference) <= table.tolerance_of(column) + 1e-12
    cell.outcome = SAME if same else DIFFERS
    cell.why = "" if same else why
    return cell


def _cells(table: PaperTable, m: Measurement) -> list[Cell]:
    cells = []
    if table.rows_from_measured:
        for name in m.rows():
            for col, key in table.columns.items():
                v = m.value(name, key)
                if v is not None:
                    cells.append(_compare(name, col, v.reference, v, table, table.why, name))
        return cells
    for r in table.rows:
        found = next((n for n in r.names() if any(v.row == n for v in m.values)), None)
        for col, key in table.columns.items():
            if col not in r.values:
                continue
            v = m.value(found, key) if found else None
            cells.append(_compare(r.row, col, r.values[col], v, table, r.why or table.why, found))
    return cells


def _unavailable(table: PaperTable, outcome: str, why: str) -> list[Cell]:
    return [Cell(r.row, c, v, None, None, None, outcome, why=why) for r in table.rows for c, v in r.values.items()]


def compare_paper(paper: PaperFile, measured: dict[str, Measurement]) -> list[TableComparison]:
    """Every table of ``paper`` against the measurements (by plan table name; absent = not built)."""
    out = _compare_tables(paper, measured)
    for t in out:
        t.short = paper.short
    return out


def _compare_tables(paper: PaperFile, measured: dict[str, Measurement]) -> list[TableComparison]:
    out = []
    for t in paper.tables:
        if t.status == "not public" or not t.measured:
            out.append(TableComparison(paper.paper, t, NOT_PUBLIC, _unavailable(t, NOT_PUBLIC, t.why)))
            continue
        m = measured.get(t.measured)
        if m is None:
            why = f"the plan's table {t.measured!r} is disabled or was not built"
            out.append(TableComparison(paper.paper, t, f"not built: {why}", _unavailable(t, "not built", why)))
            continue
        if m.status != "ok":
            state = f"{m.status}: {m.message}" if m.status == "error" else m.message
            out.append(TableComparison(paper.paper, t, state, _unavailable(t, m.status, m.message), m.notes,
                                       m.inputs, m.seconds))
            continue
        out.append(TableComparison(paper.paper, t, "ok", _cells(t, m), m.notes, m.inputs, m.seconds))
    return out


def fmt_value(x: float | None, digits: int, sd: float | None = None, n: int | None = None) -> str:
    """``0.442 ± 0.011`` (with sd over seeds), ``42`` (0 digits), ``–`` for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    text = f"{x:.{digits}f}"
    if sd is not None and n is not None and n > 1:
        text += f" ± {sd:.{digits}f}"
    return text


def _diff(c: Cell, digits: int) -> str:
    if c.difference is None:
        return ""
    return f"{c.difference:+.{digits + 1}f}" if digits else f"{c.difference:+.0f}"


def shown_why(c: Cell, t: TableComparison) -> str:
    """The cell's why line as shown: "as above" where it is the table's own line (printed once above the table),
    else its own; empty only where there is nothing to say (a same value)."""
    if not c.why:
        return ""
    return "as above" if c.why == t.table.why else c.why


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_rows(tables: list[TableComparison]) -> list[dict[str, Any]]:
    """One entry per table: where, state, and counts of same / differs / ours only / not computed."""
    out = []
    for t in tables:
        c = t.counts()
        out.append({"paper": t.short, "table": t.table.table, "id": t.table.id, "title": t.table.title,
                    "state": t.short_state(), "same": c.get(SAME, 0), "differs": c.get(DIFFERS, 0),
                    "ours_only": c.get(OURS_ONLY, 0), "not_computed": c.get(NOT_COMPUTED, 0),
                    "not_available": c.get("not available", 0)})
    return out


def index_markdown(tables: list[TableComparison], plan_source: str) -> str:
    """``results/reproduction/index.md``: the summary, then one section per table with paper vs ours."""
    lines = ["# Reproducing the papers", "",
             f"Built by `make reproduce` from the plan `{plan_source}`; the paper values are data in the paper "
             "YAML files it lists. Values with ± are the mean ± sd over seeds (the count is in the table's note). "
             "A difference is ours minus the paper's; 'same' means within half a unit of the paper's last printed "
             "decimal (or the table's stated tolerance).", "",
             "| paper | table | state | same | differ | ours only | not computed | not available |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for s in summary_rows(tables):
        lines.append(f"| {_md(s['paper'])} | [{_md(s['table'])}](#{s['id']}) | {_md(s['state'])} | "
                     f"{s['same']} | {s['differs']} | {s['ours_only']} | {s['not_computed']} | {s['not_available']} |")
    for t in tables:
        tb = t.table
        lines += ["", f'<a id="{tb.id}"></a>', "", f"## {tb.table}: {tb.title}", "", f"*{_md(t.paper)}*", ""]
        if t.state != "ok":
            lines += [f"**{_md(t.state)}**", ""]
        if tb.why:
            lines += [f"Why ours may differ: {_md(tb.why)}", ""]
        lines += [f"- {_md(n)}" for n in t.notes]
        if t.seconds is not None:
            lines.append(f"- computed in {t.seconds:.1f} s")
        if t.notes or t.seconds is not None:
            lines.append("")
        lines += ["| row | column | paper | ours | difference | outcome | why |", "|---|---|---:|---:|---:|---|---|"]
        for c in t.cells:
            d = tb.digits_of(c.column)
            lines.append(f"| {_md(c.row)} | {_md(c.column)} | {fmt_value(c.paper, d)} | "
                         f"{fmt_value(c.ours, d, c.sd, c.n)} | {_diff(c, d)} | {_md(c.outcome)} | "
                         f"{_md(shown_why(c, t))} |")
    return "\n".join(lines) + "\n"


def index_json(tables: list[TableComparison], plan_source: str) -> dict[str, Any]:
    """The same content as the Markdown index, for programs (and the site page)."""
    return {"plan": plan_source, "summary": summary_rows(tables),
            "tables": [{"paper": t.paper, "id": t.table.id, "table": t.table.table, "title": t.table.title,
                        "state": t.state, "why": t.table.why, "notes": t.notes,
                        "inputs": t.inputs, "seconds": t.seconds,
                        "cells": [{**asdict(c), "digits": t.table.digits_of(c.column), "shown_why": shown_why(c, t)}
                                  for c in t.cells]}
                       for t in tables]}
