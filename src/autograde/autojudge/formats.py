"""autograde's leaderboards in the TREC AutoJudge track's leaderboard formats (what ``auto-judge-evaluate
meta-evaluate`` reads), and back.

A leaderboard is a long table (columns ``run``, ``query_id``, ``measure``, ``value``) with each run's ``all`` row
per measure. Written one line per (run, topic, measure), whitespace-separated (``ir_measures``: run topic measure
value; ``tot``: run measure topic value; ``rag4reports``: topic run measure value; ``trec_eval``: measure topic value,
one file per run named by the run; ``jsonl``: one object per line); per-topic rows first (runs and topics in order),
then every run's ``all`` row; values as Python writes a float (``repr``: it reads back exactly). The measures of an
entry are written in the order the track's reader collects them, so its load-then-write gives these bytes again.

>>> import pandas as pd
>>> t = pd.DataFrame([("a", "q1", "m", 0.5), ("a", "all", "m", 0.5)], columns=["run", "query_id", "measure", "value"])
>>> leaderboard_lines(t, "ir_measures")
['a\\tq1\\tm\\t0.5', 'a\\tall\\tm\\t0.5']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pandas as pd

from autograde.core.errors import Problems, UnknownNameError
from autograde.core.text import atomic_write_text, iter_lines
from autograde.metrics.trec import query_sort_key

LeaderboardFormat = Literal["ir_measures", "tot", "trec_eval", "rag4reports", "jsonl"]
LEADERBOARD_FORMATS: tuple[str, ...] = ("ir_measures", "tot", "trec_eval", "rag4reports", "jsonl")
ALL_TOPICS = "all"
"""The topic id of a run's aggregate row (the track's ``all_topic_id``)."""
COLUMNS = ["run", "query_id", "measure", "value"]


def _check_format(fmt: str) -> None:
    if fmt not in LEADERBOARD_FORMATS:
        raise UnknownNameError(f"unknown leaderboard format {fmt!r}; known: {', '.join(LEADERBOARD_FORMATS)}")


def leaderboard_entries(table: pd.DataFrame) -> tuple[list[tuple[str, str, dict[str, float]]], list[str]]:
    """The entries of a leaderboard in writing order, ``(run, topic, {measure: value})`` (per-topic entries: runs,
    then topics in order; then every run's ``all`` entry), and the measures in the order the track's reader sees
    them first. Each entry's measures are in that order too (new ones in table order), so the track's load-then-write
    gives the same lines."""
    values: dict[tuple[str, str], dict[str, float]] = {}
    for run, qid, m, v in table[COLUMNS].itertuples(index=False):
        values.setdefault((str(run), str(qid)), {})[str(m)] = float(v)
    keys = sorted(values, key=lambda k: (k[1] == ALL_TOPICS, k[0], query_sort_key(k[1])))
    given = list(dict.fromkeys(str(m) for m in table["measure"]))
    seen: dict[str, int] = {}
    entries = []
    for run, qid in keys:
        vals = values[(run, qid)]
        for m in given:
            if m in vals and m not in seen:
                seen[m] = len(seen)
        entries.append((run, qid, {m: vals[m] for m in sorted(vals, key=seen.__getitem__)}))
    return entries, list(seen)


def leaderboard_lines(table: pd.DataFrame, fmt: LeaderboardFormat | str = "ir_measures") -> list[str]:
    """The lines of one leaderboard file (``trec_eval``: of every run's file, without the run)."""
    _check_format(fmt)
    entries, _ = leaderboard_entries(table)
    lines = []
    for run, qid, vals in entries:
        for m, v in vals.items():
            if fmt == "jsonl":
                lines.append(json.dumps({"run_id": run, "topic_id": qid, "measure": m, "value": v}))
            else:
                cols = {"ir_measures": (run, qid, m), "tot": (run, m, qid), "rag4reports": (qid, run, m),
                        "trec_eval": (m, qid)}[fmt]
                lines.append("\t".join([*cols, str(v)]))
    return lines


def write_leaderboard(path: str | Path, table: pd.DataFrame, fmt: LeaderboardFormat | str = "ir_measures") -> list[str]:
    """Write a leaderboard in ``fmt`` (``trec_eval``: ``path`` is a folder with one file per run); the files written."""
    _check_format(fmt)
    if fmt != "trec_eval":
        atomic_write_text(path, "\n".join(leaderboard_lines(table, fmt)) + "\n")
        return [str(path)]
    out = []
    for run, part in table.groupby("run", sort=True):
        target = Path(path) / str(run)
        atomic_write_text(target, "\n".join(leaderboard_lines(part, fmt)) + "\n")
        out.append(str(target))
    return out


def read_leaderboard(path: str | Path, fmt: LeaderboardFormat | str = "ir_measures",
                     problems: Problems | None = None) -> pd.DataFrame:
    """A leaderboard file (or, ``trec_eval``, a folder of per-run files) as a long table; a line with the wrong
    number of columns, or a value that is not a number, is a problem naming its line."""
    _check_format(fmt)
    own = problems is None
    probs = problems if problems is not None else Problems()
    files = sorted(p for p in Path(path).iterdir() if p.is_file()) if Path(path).is_dir() else [Path(path)]
    rows: list[tuple[str, str, str, float]] = []
    width = {"ir_measures": 4, "tot": 4, "rag4reports": 4, "trec_eval": 3}
    for f in files:
        for n, line in iter_lines(f, probs):
            if not line.strip():
                continue
            try:
                if fmt == "jsonl":
                    obj = json.loads(line)
                    run, qid, m, v = obj["run_id"], str(obj["topic_id"]), obj["measure"], obj["value"]
                else:
                    parts = line.split()
                    if len(parts) != width[fmt]:
                        probs.add(f, n, f"expected {width[fmt]} columns ({fmt}), got {len(parts)}",
                                  f"write one '{' '.join(_HEADER[fmt])}' per line")
                        continue
                    named = dict(zip(_HEADER[fmt], parts, strict=True))
                    run, qid, m, v = named.get("run", f.name), named["topic"], named["measure"], named["value"]
                rows.append((str(run), qid, str(m), float(v)))
            except (ValueError, KeyError, TypeError) as exc:
                probs.add(f, n, f"not a leaderboard line ({exc})", f"write one '{' '.join(_HEADER[fmt])}' per line")
    if own:
        probs.raise_if_any()
    return pd.DataFrame(rows, columns=COLUMNS)


_HEADER = {"ir_measures": ("run", "topic", "measure", "value"), "tot": ("run", "measure", "topic", "value"),
           "rag4reports": ("topic", "run", "measure", "value"), "trec_eval": ("measure", "topic", "value"),
           "jsonl": ("run_id", "topic_id", "measure", "value")}
