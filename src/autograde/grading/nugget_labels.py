"""The two label sets of nugget evaluation (TREC RAG 2024): a nugget's importance and its assignment to an answer.

>>> label_of_grade(2), label_of_grade(1), label_of_grade(0)
('support', 'partial_support', 'not_support')
>>> label_of_grade(4, (3, 5)), label_of_grade(5, (3, 5)), label_of_grade(2, (3, 5))
('partial_support', 'support', 'not_support')
>>> importance_of_grade(1), importance_of_grade(0)
('vital', 'okay')

A 0-5 grader (a nugget or question self-rating) maps onto the three assignment labels by two thresholds
``(partial, support)``: grade >= support is ``support``, grade >= partial is ``partial_support``, anything
lower ``not_support``. The assignment prompt's own grades (support 2, partial_support 1, not_support 0) are the
same mapping with thresholds (1, 2).
"""

from __future__ import annotations

from typing import Literal

Importance = Literal["vital", "okay"]
Assignment = Literal["support", "partial_support", "not_support"]

IMPORTANCE_LABELS: tuple[str, ...] = ("vital", "okay")
"""A nugget's importance (TREC RAG 2024): vital nuggets must be in a good answer, okay ones are worthwhile."""
ASSIGNMENT_LABELS: tuple[str, ...] = ("support", "partial_support", "not_support")
"""How an answer covers a nugget: fully, partly, or not."""

IMPORTANCE_GRADES: dict[str, int] = {"vital": 1, "okay": 0}
"""Grades of the importance prompt's labels."""
ASSIGNMENT_GRADES: dict[str, int] = {"support": 2, "partial_support": 1, "not_support": 0}
"""Grades of the assignment prompt's labels."""
ASSIGNMENT_THRESHOLDS: tuple[int, int] = (1, 2)
"""The thresholds that turn the assignment prompt's own grades into its labels."""

SHORT: dict[str, str] = {"support": "S", "partial_support": "P", "not_support": "N", "vital": "V", "okay": "O"}
"""One-letter forms for tables and the review site."""


def label_of_grade(grade: int, thresholds: tuple[int, int] = ASSIGNMENT_THRESHOLDS) -> str:
    """The assignment label of a grade: ``support`` from ``thresholds[1]`` up, ``partial_support`` from
    ``thresholds[0]`` up, else ``not_support``."""
    partial, support = thresholds
    if grade >= support:
        return "support"
    if grade >= partial:
        return "partial_support"
    return "not_support"


def importance_of_grade(grade: int) -> str:
    """The importance label of an importance-prompt grade (1 vital, 0 okay)."""
    return "vital" if grade >= IMPORTANCE_GRADES["vital"] else "okay"


def threshold_pair_problem(thresholds: tuple[int, int] | list[int]) -> str | None:
    """The problem with a pair of thresholds (None when fine): two integers >= 1, partial not above support."""
    if len(thresholds) != 2:
        return f"give two thresholds [partial_support, support], got {list(thresholds)}"
    partial, support = thresholds
    if partial < 1:
        return f"the partial_support threshold must be >= 1 (0 would call every answer partial), got {partial}"
    if partial > support:
        return (f"the partial_support threshold ({partial}) must not be above the support threshold ({support}) "
                "(equal thresholds: no partial support)")
    return None
