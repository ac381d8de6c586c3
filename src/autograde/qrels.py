"""Rubric-Qrels / EXAM-Qrels from the grades table.

- ``max`` mode: passage label = max grade over the query's items; the threshold tau is applied later
  as trec_eval's relevance level, and nDCG keeps the graded gain.
- ``count`` mode: passage label = number of the query's items graded >= tau (evaluated at level 1).

Every graded passage gets a row, zeros included. Pairs without a grade (unparseable / failed) do not
count; a passage none of whose pairs got a grade gets no row (it stays unjudged) and is counted.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from autograde.io.trec import Qrels
from autograde.log import logger

QrelsMode = Literal["max", "count"]


def rubric_qrels(grades: pd.DataFrame, mode: QrelsMode, threshold: int) -> Qrels:
    """Passage labels from grades (columns query_id, passage_id, grade)."""
    ok = grades.dropna(subset=["grade"])
    dropped = grades[["query_id", "passage_id"]].drop_duplicates().shape[0] - ok[["query_id", "passage_id"]].drop_duplicates().shape[0]
    if dropped:
        logger.warning("qrels: %d passage(s) have no usable grade at all and get no qrels row", dropped)
    g = ok.groupby(["query_id", "passage_id"])["grade"]
    if mode == "max":
        labels = g.max()
    elif mode == "count":
        labels = ok.assign(hit=(ok["grade"] >= threshold).astype(int)).groupby(["query_id", "passage_id"])["hit"].sum()
    else:
        raise ValueError(f"unknown qrels mode {mode!r}; valid: max, count")
    out: Qrels = {}
    for (q, p), v in labels.items():
        out.setdefault(str(q), {})[str(p)] = int(v)
    return out


def relevance_level(mode: QrelsMode, threshold: int) -> int:
    """The trec_eval relevance level (-l) at which qrels of ``mode`` are evaluated."""
    return threshold if mode == "max" else 1
