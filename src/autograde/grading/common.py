"""Shared grading logic of the LLM backends (hf, vllm, openai).

A backend subclasses :class:`LLMGrader` and implements two model operations over a list of final model
inputs: :meth:`LLMGrader._label_probs` (logits mode: raw probability of each label) and
:meth:`LLMGrader._generate` (greedy text). Everything else is here, so the backends agree exactly:
rendering (prompt order, passage truncation, chat formatting hooks), label-token selection, turning label
probabilities into grades, parsing generated text, the two-step EXAM++ answer verification, identities for
cache keys, and failure handling (one bad batch never raises out of ``grade_batch``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from autograde.grading.base import GradeRequest, GradeResult
from autograde.grading.parse import Parsed, is_ill_formed, is_unanswerable, parse_response
from autograde.grading.prompts import PromptClass, get_prompt, load_custom_prompts, render
from autograde.ids import canonical_json
from autograde.log import logger

if TYPE_CHECKING:
    from autograde.config import GraderConfig

GRADER_CODE_VERSION = "1"
"""Bump when a change in this module changes grades for the same inputs (invalidates cached grades)."""

LABEL_TOKEN_POLICY = "whole-label-first-token-of-variants/v1"
"""How labels map to tokens (see :meth:`LabelTokens.build`); part of every logits-mode identity."""


class CommonOptions(BaseModel):
    """Options every LLM backend shares (its ``options:`` block in config extends these)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    legacy_parse: bool = Field(
        default=False,
        description="reproduce the original workbench's parser, including its inverted fallback "
        "(unanswerable text -> 1, other text -> 0); off: unparseable answers are counted, never graded",
    )
    tolerant_parse: bool = Field(
        default=False, description="also accept a rating digit followed by whitespace and text ('4 - good')"
    )
    fuzzy_unanswerable: bool = Field(
        default=False, description="match unanswerable expressions fuzzily (ratio > 80) as well as exactly"
    )
    max_new_tokens: int = Field(default=16, ge=1, le=4096, description="generate mode: greedy tokens per label answer")
    answer_max_new_tokens: int = Field(
        default=64, ge=1, le=4096, description="greedy tokens for extracted answers (extraction and verification prompts)"
    )
    answer_prompt: str | None = Field(
        default=None,
        description="verification prompts: the extraction prompt whose answer is verified (default: the prompt's own)",
    )
    custom_prompts: str | None = Field(
        default=None, description="YAML file with custom prompt classes to register before looking up prompt_class"
    )


# ------------------------------------------------------------------------------------------------ label tokens


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
                raise ValueError(f"label {label!r} has no usable first token in this tokenizer; use scoring: generate")
            for tid in found:
                if tid in owner and owner[tid] != label:
                    raise ValueError(
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
    ``" yes"`` count for ``yes``; ``" 4"`` for ``4``). Each distinct token counts once; labels absent from the
    top-k get 0, and ``label_mass`` shows how much was seen (none at all: the backend parses the text instead).
    """
    probs = {label: 0.0 for label in labels}
    seen: set[str] = set()
    for token, logprob in top:
        if token in seen or not math.isfinite(logprob):
            continue
        seen.add(token)
        piece = token.strip().lower()
        for label in labels:
            if piece and piece == label.lower():
                probs[label] += math.exp(logprob)
                break
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


# ------------------------------------------------------------------------------------------------- truncation


def fit_passage(
    build: Callable[[str], str],
    passage: str,
    count: Callable[[str], int],
    cut_points: Callable[[str], list[int]],
    budget: int | None,
) -> tuple[str, bool]:
    """The model input ``build(passage')`` with ``passage'`` the longest token prefix of ``passage`` that fits.

    Only the passage is cut, never the instruction, the question/nugget or the chat template; ``cut_points``
    gives the passage's token end offsets (characters) so the kept text is the original text, not a decode.
    If the template alone exceeds ``budget`` the passage becomes empty and the input stays over budget.
    Returns (model input, whether the passage was cut).
    """
    full = build(passage)
    if budget is None:
        return full, False
    n = count(full)
    if n <= budget:
        return full, False
    ends = cut_points(passage)
    keep = max(0, min(len(ends), budget - count(build(""))))
    while True:
        text = build(passage[: ends[keep - 1]] if keep > 0 else "")
        n = count(text)
        if n <= budget or keep == 0:
            break
        keep = max(0, keep - max(1, n - budget))
    if n > budget:
        logger.warning("prompt without its passage already has %d tokens > budget %d; the passage was dropped", n, budget)
    return text, True


# ------------------------------------------------------------------------------------------------ the grader


@dataclass
class Generation:
    """One greedy generation: its text and (where the backend knows it) the first generated token id."""

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


def failed(f: Failure) -> GradeResult:
    """The GradeResult of a failure (never a grade)."""
    return GradeResult(grade=None, parse_status="failed", error=f.error, deterministic=f.deterministic)


class LLMGrader:
    """Base of the LLM graders: everything but the two model operations. Implements the ``Grader`` protocol."""

    backend: str = "?"

    def __init__(self, config: GraderConfig, options: CommonOptions) -> None:
        self.config = config
        self.options = options
        if options.custom_prompts:
            load_custom_prompts(options.custom_prompts)
        if not config.prompt_class:
            raise ValueError(f"grader {config.name!r} needs prompt_class (list them with `autograde prompts`)")
        self.prompt = get_prompt(config.prompt_class)
        self.order = config.prompt_order
        self.scoring = config.scoring
        self.answer_prompt: PromptClass | None = None
        if self.prompt.kind == "extraction" and self.scoring == "logits":
            raise ValueError(
                f"grader {config.name!r}: {self.prompt.config_name} is an extraction prompt (free-text answers); "
                "set scoring: generate"
            )
        if self.prompt.kind == "verification":
            self.answer_prompt = get_prompt(options.answer_prompt or self.prompt.answer_prompt or "")
            if self.answer_prompt.kind != "extraction":
                raise ValueError(f"answer_prompt {self.answer_prompt.config_name} must be an extraction prompt")
            self.answer_prompt.template_for(self.order)
        self.prompt.template_for(self.order)  # fails early if the order is not offered

    # -- backend hooks ---------------------------------------------------------------------------------------

    def _wrap(self, text: str) -> str:
        """Turn prompt text into the final model input (chat template, prefill); identity by default."""
        return text

    def _fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        """Fit the passage into the input budget; no budget by default."""
        return build(passage), False

    def _label_probs(self, inputs: list[str]) -> list[LabelScores | Generation | Failure]:
        """Logits mode: raw label probabilities per input (or a Generation where no logprobs are offered)."""
        raise NotImplementedError

    def _generate(self, inputs: list[str], max_new_tokens: int) -> list[Generation | Failure]:
        """Generate mode: greedy text per input."""
        raise NotImplementedError

    def _backend_identity(self) -> dict[str, Any]:
        """The backend's part of :meth:`identity` (model, revision/hash, decoding and truncation settings)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the model (backends override)."""

    # -- rendering ---------------------------------------------------------------------------------------------

    def model_input(
        self, prompt: PromptClass, request: GradeRequest, *, answer: str | None = None, gold: str | None = None
    ) -> tuple[str, bool]:
        """(exact model input for ``request`` under ``prompt``, whether its passage was truncated)."""

        def build(context: str) -> str:
            return self._wrap(render(prompt, request, self.order, context=context, answer=answer, gold=gold))

        return self._fit(build, request.passage_text)

    def render(self, request: GradeRequest) -> str:
        """The exact model input (for the cache key).

        Answer-key prompts append the answer key, and verification prompts append the verification inputs per
        gold answer (with ``{answer}`` standing for the extracted answer), because those determine the grade.
        """
        if self.prompt.kind == "verification":
            assert self.answer_prompt is not None
            first, _ = self.model_input(self.answer_prompt, request)
            checks = [self.model_input(self.prompt, request, gold=g)[0] for g in request.gold_answers]
            return first + "\n\n### verified per gold answer ({answer} = the extracted answer):\n" + "\n".join(checks)
        text, _ = self.model_input(self.prompt, request)
        if self.prompt.answer_check == "answer_key":
            text += "\n\n### answer key (not sent to the model): " + canonical_json(list(request.gold_answers))
        return text

    # -- identity ----------------------------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Everything that determines grades except the rendered input. Never secrets."""
        o = self.options
        ident: dict[str, Any] = {
            "grader_code": GRADER_CODE_VERSION,
            "backend": self.backend,
            "prompt_class": self.prompt.name,
            "prompt_version": self.prompt.version,
            "prompt_digest": self.prompt.digest(),
            "scoring": self.scoring,
            "prompt_order": self.order,
            "legacy_parse": o.legacy_parse,
            "tolerant_parse": o.tolerant_parse,
            "fuzzy_unanswerable": o.fuzzy_unanswerable,
        }
        if self.answer_prompt is not None:
            ident["answer_prompt"] = self.answer_prompt.config_name
            ident["answer_prompt_digest"] = self.answer_prompt.digest()
        if self.scoring == "generate" and self.prompt.kind != "extraction":
            ident["max_new_tokens"] = o.max_new_tokens
        if self.prompt.kind in ("extraction", "verification"):
            ident["answer_max_new_tokens"] = o.answer_max_new_tokens
        if self.scoring == "logits":
            ident["label_token_policy"] = LABEL_TOKEN_POLICY
        ident.update(self._backend_identity())
        return ident

    # -- grading -----------------------------------------------------------------------------------------------

    def _safe_call(self, fn: Callable[..., list[Any]], inputs: list[str], *args: Any) -> list[Any]:
        """Call a model operation; an exception fails the whole call's items (transient), never raises."""
        if not inputs:
            return []
        try:
            out = fn(inputs, *args)
        except Exception as exc:  # noqa: BLE001 - one bad batch must not kill the shard
            logger.exception("grader %s: %s failed for %d inputs", self.config.name, fn.__name__, len(inputs))
            return [Failure(f"{type(exc).__name__}: {exc}", deterministic=False)] * len(inputs)
        if len(out) != len(inputs):
            return [Failure(f"backend returned {len(out)} results for {len(inputs)} inputs")] * len(inputs)
        return out

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        """Grade ``requests`` (one result each, in order); failures come back as results, never exceptions."""
        if not requests:
            return []
        if self.prompt.kind == "verification":
            return self._grade_verification(requests)
        fitted = [self.model_input(self.prompt, r) for r in requests]
        inputs = [t for t, _ in fitted]
        results: list[GradeResult] = []
        if self.scoring == "logits":
            outs = self._safe_call(self._label_probs, inputs)
        else:
            max_new = self.options.answer_max_new_tokens if self.prompt.kind == "extraction" else self.options.max_new_tokens
            outs = self._safe_call(self._generate, inputs, max_new)
        for req, (_, cut), out in zip(requests, fitted, outs, strict=True):
            extra = {"passage_truncated": True} if cut else {}
            results.append(self._result(req, out, extra))
        return results

    def _result(self, req: GradeRequest, out: LabelScores | Generation | Failure, extra: dict[str, Any]) -> GradeResult:
        """One model output as a GradeResult (a Generation in logits mode: a backend without logprobs parses text)."""
        if isinstance(out, Failure):
            return failed(out)
        extra = {**out.extra, **extra}
        if isinstance(out, LabelScores):
            return result_from_label_probs(self.prompt, out.probs, extra=extra, raw=out.raw)
        parsed = parse_response(
            self.prompt, out.text, gold_answers=req.gold_answers, legacy=self.options.legacy_parse,
            tolerant=self.options.tolerant_parse, fuzzy=self.options.fuzzy_unanswerable,
        )
        if out.first_token_id is not None:
            extra["first_token_id"] = out.first_token_id
        answer = out.text.strip() if self.prompt.kind == "extraction" else parsed.label
        return result_from_parsed(parsed, out.text, answer=answer, extra=extra)

    def _grade_verification(self, requests: list[GradeRequest]) -> list[GradeResult]:
        """EXAM++ LLM verification: extract an answer, then ask per gold answer whether it is equally correct.

        Grade 1 if any gold answer is verified (logits: the gold with the highest probability of the best label
        decides). An unanswerable or ill-formed extracted answer is 0 without asking; an item without gold
        answers is unparseable (deterministic).
        """
        assert self.answer_prompt is not None
        fitted = [self.model_input(self.answer_prompt, r) for r in requests]
        answers = self._safe_call(self._generate, [t for t, _ in fitted], self.options.answer_max_new_tokens)
        results: list[GradeResult | None] = [None] * len(requests)
        checks: list[tuple[int, str]] = []
        check_inputs: list[str] = []
        for i, (req, ans) in enumerate(zip(requests, answers, strict=True)):
            if isinstance(ans, Failure):
                results[i] = failed(ans)
                continue
            text = ans.text.strip()
            if not req.gold_answers:
                results[i] = GradeResult(grade=None, parse_status="unparseable", answer=text, raw=ans.text,
                                         error="the item has no gold answers to verify against")
                continue
            if is_unanswerable(text, fuzzy=self.options.fuzzy_unanswerable) or is_ill_formed(text):
                results[i] = GradeResult(grade=0, parse_status="ok", answer=text, raw=ans.text,
                                         extra={"parse": "unanswerable or ill-formed answer; not verified"})
                continue
            for gold in req.gold_answers:
                checks.append((i, gold))
                check_inputs.append(self.model_input(self.prompt, req, answer=text, gold=gold)[0])
        if self.scoring == "logits":
            outs = self._safe_call(self._label_probs, check_inputs)
        else:
            outs = self._safe_call(self._generate, check_inputs, self.options.max_new_tokens)
        per_item: dict[int, list[tuple[str, GradeResult]]] = {}
        for (i, gold), out in zip(checks, outs, strict=True):
            per_item.setdefault(i, []).append((gold, self._result(requests[i], out, {})))
        for i, pairs in per_item.items():
            answer_text = answers[i].text.strip()  # type: ignore[union-attr]
            ok = [(g, r) for g, r in pairs if r.parse_status == "ok"]
            if not ok:
                worst = next((r for _, r in pairs if r.parse_status == "failed"), pairs[0][1])
                worst.answer = answer_text
                results[i] = worst
                continue
            gold, best = max(ok, key=lambda gr: (gr[1].grade or 0, (gr[1].grade_probs or {}).get(gr[1].answer or "", 0.0)))
            results[i] = GradeResult(
                grade=best.grade, parse_status="ok", grade_probs=best.grade_probs, expected_grade=best.expected_grade,
                label_mass=best.label_mass, answer=answer_text, raw=best.raw,
                extra={"verified_against": gold, "verification": best.answer},
            )
        return [r if r is not None else failed(Failure("internal: no result")) for r in results]


# ----------------------------------------------------------------------------------- HF tokenizer formatting


class TokenizerFormatter:
    """Chat formatting, token counting and passage cut points with a Hugging Face tokenizer (hf and vllm).

    ``chat``: wrap the prompt as one user turn with the tokenizer's chat template and the generation prompt
    (plus ``assistant_prefill``); the resulting string is tokenized without adding special tokens again.
    Without chat (seq2seq models), the prompt is tokenized with the tokenizer's special tokens (T5: ``</s>``).
    """

    def __init__(
        self, tokenizer: Any, *, chat: bool, system_prompt: str | None = None, assistant_prefill: str = "",
        max_input_tokens: int | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.chat = chat
        self.system_prompt = system_prompt
        self.assistant_prefill = assistant_prefill
        self.max_input_tokens = max_input_tokens
        self.add_special_tokens = not chat

    def wrap(self, text: str) -> str:
        if not self.chat:
            return text
        messages = []
        if self.system_prompt is not None:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": text})
        out = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return out + self.assistant_prefill

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=self.add_special_tokens)["input_ids"])

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def cut_points(self, passage: str) -> list[int]:
        """Character end offsets of the passage's tokens (fast tokenizers); whitespace words otherwise."""
        try:
            enc = self.tokenizer(passage, add_special_tokens=False, return_offsets_mapping=True)
            ends = [end for start, end in enc["offset_mapping"] if end > start]
            if ends:
                return sorted(set(ends))
        except (NotImplementedError, TypeError, ValueError, KeyError):
            pass
        import re

        return [m.end() for m in re.finditer(r"\S+", passage)]

    def fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        return fit_passage(build, passage, self.count, self.cut_points, self.max_input_tokens)

    def label_tokens(self, labels: Sequence[str]) -> LabelTokens:
        return LabelTokens.build(
            labels,
            lambda s: list(self.tokenizer(s, add_special_tokens=False)["input_ids"]),
            lambda ids: self.tokenizer.decode(ids),
        )

    def chat_template_digest(self) -> str | None:
        """Hash of the chat template string (it shapes every input), None without chat."""
        if not self.chat:
            return None
        from autograde.ids import content_hash

        return content_hash([getattr(self.tokenizer, "chat_template", None), self.system_prompt, self.assistant_prefill], 16)
