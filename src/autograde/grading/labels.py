"""Label tokens and turning label probabilities into grades (shared by the hf, vllm and openai backends).

A rating prompt's answer is one of its labels ("0".."5", "yes"/"no", ...). In logits mode the model's next-token
distribution is read at the first answer position: :class:`LabelTokens` says which token ids count for which label
(tokenizer backends), :func:`label_probs_from_text_logprobs` does the same from an API's ``top_logprobs``, and
:func:`result_from_label_probs` renormalizes over the label set into a grade, a distribution and an expected grade.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from autograde.core.errors import GraderSetupError
from autograde.grading.base import GradeResult
from autograde.grading.parse import Parsed
from autograde.grading.prompts import PromptClass

LABEL_TOKEN_POLICY = "whole-label-first-token-of-variants/v1"
"""How labels map to tokens (see :meth:`LabelTokens.build`); part of every logits-mode identity."""


def label_variants(label: str) -> list[str]:
    """Surface forms of a label the model may produce first: as is, lower/capitalized/upper, with a leading space."""
    forms = [label]
    if any(c.isalpha() for c in label):
        forms += [label.lower(), label.capitalize(), label.upper()]
    out: list[str] = []
    for f in forms:
        for v in (f, " " + f):
            if v not in out:
                out.append(v)
    return out


@dataclass(frozen=True)
class LabelTokens:
    """The token ids whose next-token probability counts for each label.

    Choice (documented, see :meth:`build`): for every surface variant of a label (``yes``, `` yes``, ``Yes``,
    `` Yes``, ``YES``, ...), encode it without special tokens and skip leading tokens that decode to whitespace
    only (sentencepiece's bare ``▁``, a BPE ``Ġ`` before a digit). A variant counts when the first remaining token
    IS the whole label (case-insensitive, spaces stripped); only if no variant of a label is a single token does
    the first piece of each variant count instead (an approximation for long labels; ``YES`` split into ``Y`` +
    ``ES`` does not make ``Y`` a yes when ``yes`` is a token). A label's probability is the sum over its distinct
    token ids. Two labels sharing a token id is an error (their probabilities could not be told apart).
    """

    labels: tuple[str, ...]
    ids: tuple[tuple[int, ...], ...]
    tokens: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def build(
        cls, labels: Sequence[str], encode: Callable[[str], list[int]], decode: Callable[[list[int]], str]
    ) -> LabelTokens:
        per_label: list[tuple[int, ...]] = []
        per_label_text: list[tuple[str, ...]] = []
        owner: dict[int, str] = {}
        for label in labels:
            whole: list[int] = []
            prefix: list[int] = []
            for variant in label_variants(label):
                ids = list(encode(variant))
                while ids and not decode([ids[0]]).strip():
                    ids.pop(0)
                if not ids:
                    continue
                piece = decode([ids[0]]).strip().lower()
                target = whole if piece == label.lower() else prefix if piece and label.lower().startswith(piece) else None
                if target is not None and ids[0] not in target:
                    target.append(ids[0])
            found = whole or prefix
            if not found:
                raise GraderSetupError(f"label {label!r} has no usable first token in this tokenizer; use scoring: generate")
            for tid in found:
                if tid in owner and owner[tid] != label:
                    raise GraderSetupError(
                        f"labels {owner[tid]!r} and {label!r} start with the same token {decode([tid])!r} (id {tid}); "
                        "logits scoring cannot separate them: use scoring: generate or distinct labels"
                    )
                owner[tid] = label
            per_label.append(tuple(found))
            per_label_text.append(tuple(decode([t]) for t in found))
        return cls(tuple(labels), tuple(per_label), tuple(per_label_text))

    def all_ids(self) -> list[int]:
        """Every label token id (for ``logprob_token_ids`` requests)."""
        return [t for ids in self.ids for t in ids]

    def label_of(self, token_id: int) -> str | None:
        """The label a token id belongs to (None if it is no label token)."""
        for label, ids in zip(self.labels, self.ids, strict=True):
            if token_id in ids:
                return label
        return None

    def probs_from_token_logprobs(self, logprobs: dict[int, float]) -> dict[str, float]:
        """Raw label probabilities from ``{token_id: logprob}`` (missing tokens count as probability 0)."""
        return {
            label: sum(math.exp(logprobs[t]) for t in ids if t in logprobs and math.isfinite(logprobs[t]))
            for label, ids in zip(self.labels, self.ids, strict=True)
        }

    def describe(self) -> dict[str, list[int]]:
        """``{label: [token ids]}`` for identities and logs."""
        return {label: list(ids) for label, ids in zip(self.labels, self.ids, strict=True)}


def label_probs_from_text_logprobs(labels: Sequence[str], top: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Raw label probabilities from an API's ``top_logprobs`` [(token text, logprob)] of the first position.

    A token counts for a label when its text, stripped of whitespace and lower-cased, is the label (``"Yes"``,
    ``" yes"`` count for ``yes``; ``" 4"`` for ``4``). A label of words joined by underscores
    (``partial_support``), which no tokenizer has as one token, also counts the token of its first word
    (``"partial"``, ``" Not"``) when no other label starts with that word: the first token is all a logprobs API
    shows. Each distinct token counts once; labels absent from the top-k get 0, and ``label_mass`` shows how much
    was seen (none at all: the backend parses the text instead).

    >>> p = label_probs_from_text_logprobs(["support", "partial_support", "not_support"],
    ...                                    [(" partial", -0.5), ("support", -2.0), ("Not", -3.0), ("none", -1.0)])
    >>> [round(p[k], 3) for k in ("support", "partial_support", "not_support")]
    [0.135, 0.607, 0.05]
    """
    probs = {label: 0.0 for label in labels}
    firsts = {label.lower().split("_")[0]: label for label in labels if "_" in label.strip("_")}
    firsts = {w: label for w, label in firsts.items()
              if not any(other != label and other.lower().split("_")[0] == w for other in labels)}
    seen: set[str] = set()
    for token, logprob in top:
        if token in seen or not math.isfinite(logprob):
            continue
        seen.add(token)
        piece = token.strip().lower()
        if not piece:
            continue
        match = next((label for label in labels if piece == label.lower()), None) or firsts.get(piece)
        if match is not None:
            probs[match] += math.exp(logprob)
    return probs


def result_from_label_probs(
    prompt: PromptClass, probs: dict[str, float], *, extra: dict[str, Any] | None = None, raw: str | None = None
) -> GradeResult:
    """Grade from raw label probabilities: renormalize over the label set, argmax grade, expected grade.

    ``label_mass`` keeps the raw total probability of the label tokens (how much the model "wanted" to answer
    with a label at all). No label mass at all is ``unparseable`` (never a grade).
    """
    mass = float(sum(p for p in probs.values() if math.isfinite(p)))
    if not mass > 0.0:
        return GradeResult(
            grade=None, parse_status="unparseable", label_mass=0.0, raw=raw,
            error="no probability on any label token", extra=dict(extra or {}),
        )
    grade_probs = {label: float(probs.get(label, 0.0)) / mass for label in prompt.labels}
    best = max(prompt.labels, key=lambda label: grade_probs[label])  # ties: the first label in label order
    expected = sum(grade_probs[label] * prompt.labels[label] for label in prompt.labels)
    return GradeResult(
        grade=prompt.labels[best], parse_status="ok", grade_probs=grade_probs, expected_grade=expected,
        label_mass=min(mass, 1.0), answer=best, raw=raw, extra=dict(extra or {}),
    )


def result_from_parsed(parsed: Parsed, text: str, *, answer: str | None, extra: dict[str, Any] | None = None) -> GradeResult:
    """A GradeResult for a parsed generation (unparseable is deterministic: greedy decoding would repeat it)."""
    ex = dict(extra or {})
    ex["parse"] = parsed.reason
    if parsed.fallback:
        ex["legacy_fallback"] = True
    if parsed.status != "ok":
        return GradeResult(grade=None, parse_status="unparseable", answer=answer, raw=text, error=parsed.reason, extra=ex)
    return GradeResult(grade=parsed.grade, parse_status="ok", answer=answer, raw=text, extra=ex)
