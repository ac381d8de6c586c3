"""Graders whose behaviour is known, for the mechanics of the robustness audit (they implement the grader
interface of :mod:`autograde.grading.base`; no model).

- :class:`PassageBlind` ignores the passage: its grade depends on the query only, so no perturbation of the passage
  can move it (shift exactly 0);
- :class:`QueryTermCounter` counts the query's terms in the passage (capped at 3): stuffing the query's terms lifts
  any passage, an injection text (no query term) does not.
"""

from __future__ import annotations

import re
from typing import Any

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest, GradeResult


class KnownGrader:
    """A grader without a model; ``calls`` counts the requests it graded (cache misses)."""

    name = "known"

    def __init__(self) -> None:
        self.calls = 0

    def identity(self) -> dict[str, Any]:
        return {"known_grader": self.name, "version": "1"}

    def render(self, request: GradeRequest) -> str:
        return f"{request.query_text}\n{request.passage_text}"

    def grade(self, request: GradeRequest) -> int:
        raise NotImplementedError

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        self.calls += len(requests)
        return [GradeResult(grade=self.grade(r)) for r in requests]

    def close(self) -> None:
        pass


class PassageBlind(KnownGrader):
    name = "passage-blind"

    def grade(self, request: GradeRequest) -> int:
        return len(request.query_text) % 4


class QueryTermCounter(KnownGrader):
    name = "query-term-counter"

    def grade(self, request: GradeRequest) -> int:
        from autograde.audit.perturb import query_terms

        words = re.findall(r"\w+", request.passage_text.lower())
        return min(3, sum(words.count(t) for t in set(query_terms(request.query_text))))


def known_config(grader: KnownGrader) -> GraderConfig:
    """The config entry a grade table names for a known grader (a direct grader)."""
    return GraderConfig(name=grader.name, bank="direct")
