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

from autograde.core.errors import InvalidValueError
from autograde.core.log import logger
from autograde.io.trec import Qrels

QrelsMode = Literal["max", "count"]


def passage_labels(grades: pd.DataFrame, mode: QrelsMode, threshold: int, warn: bool = True) -> pd.Series:
    """The label of every graded passage: a Series indexed by (query_id, passage_id), ints.

    The ONE definition of a passage's label from its grades (qrels, verification reports and calibrated
    relevance all use it): ``max`` = the highest grade over the query's items; ``count`` = the number of grade
    rows >= ``threshold`` (one row per item). Pairs without a grade do not count; a passage none of whose pairs
    got a grade has no label (counted in a warning).
    """
    ok = grades.dropna(subset=["grade"])
    if warn:
        dropped = grades[["query_id", "passage_id"]].drop_duplicates().shape[0] - \
            ok[["query_id", "passage_id"]].drop_duplicates().shape[0]
        if dropped:
            logger.warning("qrels: %d passage(s) have no usable grade at all and get no qrels row", dropped)
    if mode == "max":
        labels = ok.groupby(["query_id", "passage_id"])["grade"].max()
    elif mode == "count":
        labels = ok.assign(hit=(ok["grade"] >= threshold).astype(int)).groupby(["query_id", "passage_id"])["hit"].sum()
    else:
        raise InvalidValueError(f"unknown qrels mode {mode!r} (fix: use max or count)")
    return labels.astype(int)


def rubric_qrels(grades: pd.DataFrame, mode: QrelsMode, threshold: int) -> Qrels:
    """Passage labels from grades (columns query_id, passage_id, grade) as qrels (see :func:`passage_labels`)."""
    labels = passage_labels(grades, mode, threshold)
    out: Qrels = {}
    for (q, p), v in labels.items():
        out.setdefault(str(q), {})[str(p)] = int(v)
    return out


def relevance_level(mode: QrelsMode, threshold: int) -> int:
    """The trec_eval relevance level (-l) at which qrels of ``mode`` are evaluated (:attr:`QrelsVariant.level`)."""
    from autograde.core.layout import QrelsVariant

    return QrelsVariant(mode, threshold).level
