"""The model side of the LLM backends: one interface over hf, vllm and openai.

An :class:`LLMBackend` owns a loaded model (or an API client) and offers the operations that graders and the
test-bank generator need, over final prompt texts:

- :meth:`LLMBackend.wrap`: the prompt as the model sees it (chat template, assistant prefill);
- :meth:`LLMBackend.fit`: cut the passage so the input fits the model's budget;
- :meth:`LLMBackend.label_probs`: raw next-token probability of each label (logits scoring);
- :meth:`LLMBackend.generate`: text (greedy by default, or sampled with :class:`Decoding`);
- :meth:`LLMBackend.identity`: what identifies the model and its settings (for cache keys; never secrets).

Every operation returns one result per input in order; a result is a value or a :class:`Failure`, so a caller
never loses a batch to one bad input. Backends import their heavy dependencies (torch, vllm, openai) lazily.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograde.grading.base import GradeResult


@dataclass
class Generation:
    """One generation: its text and (where the backend knows it) the first generated token id."""

    text: str
    first_token_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class LabelScores:
    """Raw (not renormalized) probability of each label at the first generated position."""

    probs: dict[str, float]
    raw: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Failure:
    """No answer for one input; ``deterministic`` failures may be cached, transient ones are retried next run."""

    error: str
    deterministic: bool = False


@dataclass(frozen=True)
class Decoding:
    """How to decode text: greedy unless a temperature > 0 asks for sampling; part of the identity.

    ``temperature=None`` means the backend's configured default (greedy for hf and vllm, the ``temperature``
    option for openai), which is what graders use.
    """

    max_new_tokens: int = 16
    temperature: float | None = None
    top_p: float = 1.0
    seed: int | None = 0

    def describe(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature, "top_p": self.top_p,
                "seed": self.seed}


def failed(f: Failure) -> GradeResult:
    """The GradeResult of a failure (never a grade)."""
    return GradeResult(grade=None, parse_status="failed", error=f.error, deterministic=f.deterministic)


class LLMBackend:
    """A loaded model or API client; subclasses implement the model operations."""

    name: str = "?"

    def wrap(self, text: str) -> str:
        """Turn prompt text into the final model input (chat template, prefill); identity by default."""
        return text

    def continues_text(self) -> bool:
        """Whether text appended to :meth:`wrap`'s output is continued by the model (a causal model's prompt), so
        logits scoring can read the label after a prompt's ``answer_prefix``; a chat API or a seq2seq model cannot."""
        return True

    def fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        """Fit the passage into the input budget; no budget by default. Returns (input, passage was cut)."""
        return build(passage), False

    def label_probs(self, inputs: list[str], labels: Sequence[str]) -> list[LabelScores | Generation | Failure]:
        """Raw probability of each label as the first answer token (a Generation where no logprobs are offered)."""
        raise NotImplementedError

    def generate(self, inputs: list[str], decoding: Decoding) -> list[Generation | Failure]:
        """Text per input."""
        raise NotImplementedError

    def identity(self, labels: Sequence[str] | None = None) -> dict[str, Any]:
        """Model, revision or weights hash, dtype, truncation budget, chat template; with ``labels``, how labels
        map to tokens. Never secrets."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the model, sessions and threads."""
