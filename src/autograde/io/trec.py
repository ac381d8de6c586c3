"""TREC run and qrels files.

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "r.run")
>>> _ = open(p, "w").write("q1 Q0 d1 1 2.5 sys\\nq1 Q0 d2 2 1.0 sys\\n")
>>> read_run(p).runs["sys"]["q1"]
{'d1': 2.5, 'd2': 1.0}
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from autograde.core.errors import Problems
from autograde.core.text import atomic_write_text, iter_lines

Qrels = dict[str, dict[str, int]]
"""query_id -> doc_id -> relevance grade."""

RunDict = dict[str, dict[str, float]]
"""query_id -> doc_id -> score."""


@dataclass
class RunFile:
    """The contents of one TREC run file: one or more run tags, each query -> doc -> score."""

    path: str
    runs: dict[str, RunDict] = field(default_factory=dict)
    ranks: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    first_line: dict[tuple[str, str], int] = field(default_factory=dict)
    """(run tag, query id) -> line number of its first line (for error messages)."""


def _parse_int_like(token: str) -> int | None:
    """An integer written as ``2``, ``-1`` or ``2.0``; None for anything else (``1.5``, ``nan``, ``two``).

    A fractional value is refused rather than truncated (``atol`` would read ``1.5`` as 1 and change results
    silently).
    """
    try:
        return int(token)
    except ValueError:
        pass
    try:
        value = float(token)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def qrels_lines(path: str | Path, probs: Problems) -> Iterator[tuple[int, str, str, int]]:
    """Every well-formed line of a TREC qrels file as ``(line number, qid, docid, grade)``; a line with the wrong
    column count or a non-integer grade is reported to ``probs`` (file and line) and skipped."""
    for n, line in iter_lines(path, probs):
        if not line.strip():
            continue
        cols = line.split()
        if len(cols) != 4:
            probs.add(path, n, f"qrels line has {len(cols)} columns, expected 4 (query_id iteration doc_id relevance)",
                      "use the TREC qrels format: 'qid 0 docid grade'")
            continue
        qid, _it, docid, rel = cols
        grade = _parse_int_like(rel)
        if grade is None:
            probs.add(path, n, f"relevance grade {rel!r} is not an integer", "use an integer grade such as 0, 1, 2")
            continue
        yield n, qid, docid, grade


def read_qrels(path: str | Path, problems: Problems | None = None) -> Qrels:
    """Read a TREC qrels file (``qid iter docid rel``, any whitespace).

    Raises :class:`autograde.core.errors.InputError` listing every malformed line (wrong column count,
    non-numeric grade, duplicate (qid, docid)) unless a ``problems`` collector is passed.
    """
    return read_qrels_with_lines(path, problems)[0]


def read_qrels_with_lines(path: str | Path, problems: Problems | None = None
                          ) -> tuple[Qrels, dict[tuple[str, str], int]]:
    """:func:`read_qrels` and the line of every judgment (so that a later problem with one names its line)."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    qrels: Qrels = {}
    lines: dict[tuple[str, str], int] = {}
    for n, qid, docid, grade in qrels_lines(path, probs):
        docs = qrels.setdefault(qid, {})
        if docid in docs:
            probs.add(path, n, f"duplicate judgment for query {qid!r} document {docid!r}",
                      "keep one judgment per (query, document)")
            continue
        docs[docid] = grade
        lines[(qid, docid)] = n
    if own:
        probs.raise_if_any()
    return qrels, lines


DUPLICATE_FIX = "each document may appear once per query; remove the repeated line"


def duplicate_message(docid: str, qid: str, tag: str) -> str:
    return f"duplicate document {docid!r} for query {qid!r} in run {tag!r}"


def parse_run_line(path: str | Path, n: int, line: str, probs: Problems) -> tuple[str, str, int, float, str] | None:
    """``(query_id, doc_id, rank, score, tag)`` of one run line; None for a blank line or a problem (reported)."""
    if not line.strip():
        return None
    cols = line.split()
    if len(cols) != 6:
        probs.add(path, n, f"run line has {len(cols)} columns, expected 6 (query_id Q0 doc_id rank score run_tag)",
                  "use the TREC run format: 'qid Q0 docid rank score tag'")
        return None
    qid, _q0, docid, rank_s, score_s, tag = cols
    try:
        score = float(score_s)
    except ValueError:
        probs.add(path, n, f"score {score_s!r} is not a number", "the fifth column must be a number")
        return None
    if not math.isfinite(score):
        probs.add(path, n, f"score {score_s!r} is not a finite number (it would break the ranking)",
                  "give every document a finite score")
        return None
    rank = _parse_int_like(rank_s)
    if rank is None:
        probs.add(path, n, f"rank {rank_s!r} is not an integer", "the fourth column must be an integer rank")
        return None
    return qid, docid, rank, score, tag


def read_run(path: str | Path, problems: Problems | None = None) -> RunFile:
    """Read a TREC run file (``qid Q0 docid rank score tag``, any whitespace).

    Every problem is collected (wrong column count, non-numeric score or rank, duplicate docid
    within one query of a run) and raised together, each with its file and line.
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    out = RunFile(path=str(path))
    for n, line in iter_lines(path, probs):
        row = parse_run_line(path, n, line, probs)
        if row is None:
            continue
        qid, docid, rank, score, tag = row
        docs = out.runs.setdefault(tag, {}).setdefault(qid, {})
        out.first_line.setdefault((tag, qid), n)
        if docid in docs:
            probs.add(path, n, duplicate_message(docid, qid, tag), DUPLICATE_FIX)
            continue
        docs[docid] = score
        out.ranks.setdefault(tag, {}).setdefault(qid, {})[docid] = rank
    if not out.runs and not probs.items:
        probs.add(path, None, "run file is empty", "give a run file with at least one line")
    if own:
        probs.raise_if_any()
    return out


def trec_order(docs: dict[str, float]) -> list[str]:
    """Doc ids in trec_eval's order: score descending, then doc id descending (byte order).

    trec_eval (<= 9.0.8, as inside pytrec-eval-terrier) compares scores as float32.
    """
    import numpy as np

    return sorted(docs, key=lambda d: (-float(np.float32(docs[d])), _neg_bytes(d)))


class _neg_bytes:  # tiny sort key helper
    """Sort key that orders strings by descending UTF-8 bytes."""

    __slots__ = ("b",)

    def __init__(self, s: str) -> None:
        self.b = s.encode("utf-8")

    def __lt__(self, other: _neg_bytes) -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _neg_bytes) and self.b == other.b


def write_qrels(path: str | Path, qrels: Qrels) -> None:
    """Write qrels sorted by query then doc id (deterministic bytes), atomically."""
    lines = [f"{qid} 0 {doc} {qrels[qid][doc]}\n" for qid in sorted(qrels) for doc in sorted(qrels[qid])]
    atomic_write_text(path, "".join(lines))


def write_run(path: str | Path, run: RunDict, tag: str) -> None:
    """Write one run in TREC format, ranks in trec_eval order, atomically."""
    lines = []
    for qid in sorted(run):
        for rank, doc in enumerate(trec_order(run[qid]), start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {run[qid][doc]:.6g} {tag}\n")
    atomic_write_text(path, "".join(lines))


def trec_ranked(rankings: pd.DataFrame) -> pd.DataFrame:
    """Rankings with ``trec_rank``: score desc (float32), doc id desc, per (run, query), as trec_eval orders."""
    import numpy as np  # here: every rule job imports this module, few of them rank
    df = rankings.copy()
    df["_s"] = df["score"].astype(np.float32)
    df = df.sort_values(["run", "query_id", "_s", "passage_id"], ascending=[True, True, False, False], kind="mergesort")
    df["trec_rank"] = df.groupby(["run", "query_id"]).cumcount() + 1
    return df.drop(columns="_s")
