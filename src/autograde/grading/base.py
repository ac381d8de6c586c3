"""The grader interface every backend implements.

A grader turns a batch of :class:`GradeRequest` (one test-bank item x one passage) into
:class:`GradeResult` values. Everything else (cache lookups, sharding, provenance, failure
accounting, writing the grades table) lives in :mod:`autograde.grading.shard` and is shared by all
backends, so a backend only renders inputs and calls its model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

ParseStatus = Literal["ok", "unparseable", "failed"]
"""``ok``: a grade; ``unparseable``: the model answered but no grade could be read; ``failed``: no answer."""


@dataclass(frozen=True)
class GradeRequest:
    """One (test-bank item, passage) pair to grade. ``item_kind`` is question, nugget or query (direct)."""

    query_id: str
    query_text: str
    passage_id: str
    passage_text: str
    item_id: str
    item_kind: str
    item_text: str
    gold_answers: tuple[str, ...] = ()


@dataclass
class GradeResult:
    """What a grader returns for one request.

    ``grade`` is None exactly when ``parse_status`` is not ``ok``. ``deterministic`` says whether a
    failure would repeat on retry (an unparseable answer from greedy decoding) and may be cached;
    transient failures (timeouts, 5xx) are not cached and are retried on the next run.
    """

    grade: int | None
    parse_status: ParseStatus = "ok"
    grade_probs: dict[str, float] | None = None
    expected_grade: float | None = None
    label_mass: float | None = None
    answer: str | None = None
    raw: str | None = None
    error: str | None = None
    deterministic: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


APPROXIMATE_CHARS_PER_TOKEN = 4
"""Where a grader has no tokenizer here (an endpoint counts with its own), one token per this many characters."""


def approximate_tokens(text: str) -> int:
    """The tokens of ``text`` where no tokenizer is at hand: one per :data:`APPROXIMATE_CHARS_PER_TOKEN` characters,
    rounded up."""
    return -(-len(text) // APPROXIMATE_CHARS_PER_TOKEN)


@dataclass(frozen=True)
class TokenCount:
    """Tokens a model processes to grade some requests in one job, counted without running it."""

    input_tokens: int
    output_tokens: int
    counted_by: str
    """``tokenizer`` (the grader's own) or ``approximation`` (characters / :data:`APPROXIMATE_CHARS_PER_TOKEN`)."""
    output_at_most: bool = False
    """``output_tokens`` is an upper bound (generate mode: the token limit), not an exact count."""


@runtime_checkable
class Grader(Protocol):
    """A configured grader: a prompt/scoring recipe bound to one model.

    Optional: ``use_cache(cache_dir, readonly=False)``, for a grader that keeps intermediate results of its own
    under the cache folder (the embedded grader's text vectors); the grading jobs and the plan call it when present.
    """

    def identity(self) -> dict[str, Any]:
        """Everything that determines its output except the rendered input (for cache keys and provenance).

        Must include prompt class and version, model id and revision or file hash, scoring mode,
        decoding parameters and truncation budget. Never secrets.
        """
        ...

    def render(self, request: GradeRequest) -> str:
        """The exact input the model sees for ``request`` (prompt text, or the pair for encoders)."""
        ...

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        """Grade a batch; one result per request, in order. Must not raise for one bad item."""
        ...

    def close(self) -> None:
        """Release models, sessions and threads."""
        ...

    def count_tokens(self, requests: list[GradeRequest]) -> TokenCount:
        """The tokens grading ``requests`` in one job would take, counted with the grader's own tokenizer (loading
        no model where it can), for ``autograde plan``."""
        ...

    def usage(self) -> dict[str, int]:
        """The tokens the model really processed so far: ``input_tokens`` and ``output_tokens``."""
        ...
