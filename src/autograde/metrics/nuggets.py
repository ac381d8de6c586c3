"""Nugget scores of RAG answers (TREC RAG 2024): All, Vital and Weighted, each strict and not.

Measures are registered objects with their parameters in the name (``AllScore(strict=True)``); each has a file-safe
name, the key the reference scorer (``castorini/nuggetizer``, ``nuggetizer.core.metrics``) writes
(``strict_all_score``), so the scores plug into the same evaluation table, leaderboards, permutation test and
correlation as the trec_eval measures.

>>> labels = [("vital", "support"), ("vital", "partial_support"), ("okay", "support"), ("okay", "not_support")]
>>> s = answer_scores(labels)
>>> s["all_score"], s["strict_all_score"], s["vital_score"], s["strict_vital_score"]
(0.625, 0.5, 0.75, 0.5)
>>> s["weighted_score"], s["strict_weighted_score"]   # (1 + 0.5 + 0.5*1 + 0) / (2 + 2*0.5); (1 + 0.5) / 3
(0.6666666666666666, 0.5)
>>> str(nugget_score("strict_vital_score")), nugget_score("VitalScore(strict=True)").name
('VitalScore(strict=True)', 'strict_vital_score')

Per answer (one run's answer to one query), over the query's nuggets, with s = 1 for support, 0.5 for
partial_support (0 when strict) and 0 for not_support:

- All = mean of s over all nuggets; Vital = mean of s over the vital nuggets, **0.0 for an answer whose query has
  no vital nugget** (as the reference scorer computes it; it is not left out of the run's mean);
- Weighted = sum(w * s) / sum(w) with w = 1 for vital and 0.5 for okay nuggets (the TREC 2024 RAG track's weighted
  score; the reference scorer does not compute it); 0.0 without nuggets.

A run's score is the plain mean over its answers (``statistics.mean``, exactly as the reference scorer averages).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

Subset = Literal["all", "vital", "weighted"]
PARTIAL_CREDIT = 0.5
"""What a ``partial_support`` assignment counts in the non-strict scores."""
OKAY_WEIGHT = 0.5
"""Weight of an okay nugget in the Weighted scores (a vital nugget weighs 1)."""
ALL_QUERIES = "all"
"""The query id of a run's mean row in evaluation tables (as trec_eval and the reference scorer write it)."""


@dataclass(frozen=True)
class NuggetScore:
    """One nugget score measure: which nuggets count and whether partial support earns credit."""

    subset: Subset
    strict: bool = False

    @property
    def name(self) -> str:
        """File-safe name, the reference scorer's key: ``all_score``, ``strict_vital_score``, ``weighted_score``."""
        return f"{'strict_' if self.strict else ''}{self.subset}_score"

    @property
    def title(self) -> str:
        """Human name: ``All``, ``Vital (strict)``."""
        return self.subset.capitalize() + (" (strict)" if self.strict else "")

    def __str__(self) -> str:
        return f"{self.subset.capitalize()}Score({'strict=True' if self.strict else ''})"

    def value(self, labels: Sequence[tuple[str, str]]) -> float:
        """This measure for one answer, from its nuggets' (importance, assignment)."""
        partial = 0.0 if self.strict else PARTIAL_CREDIT
        if self.subset == "weighted":
            num = den = 0.0
            for importance, assignment in labels:
                w = 1.0 if importance == "vital" else OKAY_WEIGHT
                den += w
                num += w * (1.0 if assignment == "support" else partial if assignment == "partial_support" else 0.0)
            return num / den if den else 0.0
        used = [a for i, a in labels if self.subset == "all" or i == "vital"]
        if not used:
            return 0.0
        supported = sum(1 for a in used if a == "support")  # the reference: count of support, plus 0.5 per partial
        credit = supported + (sum(PARTIAL_CREDIT for a in used if a == "partial_support") if not self.strict else 0)
        return credit / len(used)


SUBSETS: tuple[Subset, ...] = ("all", "vital", "weighted")
MEASURES: tuple[NuggetScore, ...] = tuple(NuggetScore(s, strict) for s in SUBSETS for strict in (False, True))
"""Every nugget score, in the order reports list them."""
REFERENCE_MEASURES: tuple[str, ...] = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")
"""The four the reference scorer writes, in its order."""
_BY_NAME = {m.name: m for m in MEASURES}
_CALL_RE = re.compile(r"(All|Vital|Weighted)Score\((?:strict=(True|False))?\)")


def nugget_score(name: str) -> NuggetScore | None:
    """The nugget score named by its file-safe name (``strict_all_score``) or its call form
    (``AllScore(strict=True)``); None when ``name`` is neither (:func:`autograde.metrics.measures.parse_measure` is
    the one parser of measure names)."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    m = _CALL_RE.fullmatch(name.replace(" ", ""))
    if m:
        return NuggetScore(m.group(1).lower(), m.group(2) == "True")  # type: ignore[arg-type]
    return None


def answer_scores(labels: Sequence[tuple[str, str]], measures: Iterable[NuggetScore] = MEASURES) -> dict[str, float]:
    """Every measure for one answer: ``{name: value}`` from its nuggets' (importance, assignment)."""
    return {m.name: m.value(labels) for m in measures}


def mean(values: Sequence[float]) -> float:
    """The reference scorer's mean (``statistics.mean``: exact, correctly rounded); 0.0 for no values."""
    return float(statistics.mean(values)) if values else 0.0


def evaluation_table(answers: Iterable[tuple[str, str, Sequence[tuple[str, str]]]],
                     measures: Sequence[NuggetScore] = MEASURES) -> pd.DataFrame:
    """Per-answer scores and each run's mean in the evaluation table format (run, query_id, measure, value; the
    mean under query ``all``), from ``(run, query_id, [(importance, assignment), ...])`` per answer."""
    rows: list[tuple[str, str, str, float]] = []
    per_run: dict[str, dict[str, list[float]]] = {}
    for run, qid, labels in answers:
        for name, v in answer_scores(labels, measures).items():
            rows.append((run, qid, name, v))
            per_run.setdefault(run, {}).setdefault(name, []).append(v)
    for run in sorted(per_run):
        rows.extend((run, ALL_QUERIES, name, mean(vals)) for name, vals in per_run[run].items())
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def answers_from_assignments(assignments: pd.DataFrame) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """``(run, query_id, [(importance, assignment), ...])`` per answer of a long assignments table (columns run,
    query_id, importance, assignment), in (run, query) order."""
    out = []
    cols = assignments[["run", "query_id", "importance", "assignment"]]
    for (run, qid), g in cols.groupby(["run", "query_id"], sort=True):
        out.append((str(run), str(qid), list(zip(g["importance"], g["assignment"], strict=True))))
    return out
