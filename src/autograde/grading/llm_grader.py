"""The LLM grader: a prompt class and a scoring mode bound to one :class:`~autograde.grading.backend.LLMBackend`.

Everything the backends must agree on lives here, so hf, vllm and openai grade identically: rendering (prompt
order, passage truncation through the backend's budget, chat formatting through its ``wrap``), turning label
probabilities or generated text into grades, identities for cache keys, and failure handling (one bad batch
never raises out of ``grade_batch``). The EXAM++ two-step verification flow is in
:mod:`autograde.grading.verification`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from autograde.core.errors import AutogradeError, GraderSetupError
from autograde.core.ids import canonical_json
from autograde.core.log import logger
from autograde.core.schema import Strict
from autograde.grading.backend import Decoding, Failure, Generation, LabelScores, LLMBackend, failed
from autograde.grading.base import GradeRequest, GradeResult, TokenCount, approximate_tokens
from autograde.grading.labels import LABEL_TOKEN_POLICY, result_from_label_probs, result_from_parsed
from autograde.grading.parse import parse_response
from autograde.grading.prompts import PromptClass, get_prompt, load_custom_prompts, render

if TYPE_CHECKING:
    from autograde.config.model import GraderConfig

GRADER_CODE_VERSION = "1"
"""Bump when a change in grading logic changes grades for the same inputs (invalidates cached grades)."""



Flow = Callable[["LLMGrader", list[GradeRequest]], list[GradeResult]]
FLOWS: dict[str, Flow] = {}
"""prompt kind -> the flow that grades with prompts of that kind in several model calls. Flow modules register
themselves (:mod:`autograde.grading.verification`); the grader never imports them (imports go one way)."""

class CommonOptions(Strict):
    """Options every LLM backend shares (its ``options:`` block in config extends these)."""

    legacy_parse: bool = Field(
        default=False,
        description="reproduce the original workbench's parser, including its inverted fallback "
        "(unanswerable text -> 1, other text -> 0); off: unparseable answers are counted, never graded",
    )
    tolerant_parse: bool = Field(
        default=False, description="also accept a rating digit followed by whitespace and text ('4 - good')"
    )
    umbrela_parser: Literal["repository", "pypi-0.0.7"] | None = Field(
        default=None,
        description="prompts with an answer form (UMBRELA), generate mode: parse every answer exactly as UMBRELA "
        "does, its fallback to grade 0 included (counted): repository = castorini/umbrela at commit 16cba3eb, "
        "pypi-0.0.7 = the PyPI package umbrela 0.0.7 (quoted JSON keys only); null: autograde's parser",
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


def resolve_prompts(config: GraderConfig, options: CommonOptions) -> tuple[PromptClass, PromptClass | None]:
    """(the grader's prompt, its answer-extraction prompt for verification prompts), checked against the scoring
    mode and prompt order. Raises :class:`GraderSetupError` with the fix; loads no model."""
    try:
        if options.custom_prompts:
            load_custom_prompts(options.custom_prompts)
        if not config.prompt_class:
            raise GraderSetupError(f"grader {config.name!r} needs prompt_class (list them with `autograde prompts`)")
        prompt = get_prompt(config.prompt_class)
        answer_prompt: PromptClass | None = None
        if config.scoring == "logits" and not prompt.scorable_by_logits:
            raise GraderSetupError(
                f"grader {config.name!r}: {prompt.config_name} is an extraction prompt (free-text answers); "
                "set scoring: generate"
            )
        if prompt.kind == "verification":
            answer_prompt = get_prompt(options.answer_prompt or prompt.answer_prompt or "")
            if answer_prompt.kind != "extraction":
                raise GraderSetupError(f"answer_prompt {answer_prompt.config_name} must be an extraction prompt")
            answer_prompt.template_for(config.prompt_order)
        prompt.template_for(config.prompt_order)  # fails early if the order is not offered
        if options.umbrela_parser is not None and (not prompt.answer_prefix or config.scoring == "logits"):
            raise GraderSetupError(
                f"grader {config.name!r}: options.umbrela_parser parses the generated answers of a prompt with an "
                f"answer form (UMBRELA); {prompt.config_name} with scoring: {config.scoring} has "
                + ("none" if not prompt.answer_prefix else "no text to parse (logits scoring reads the label's "
                   "probability)") + " (fix: set scoring: generate with an UMBRELA prompt, or remove umbrela_parser)")
    except GraderSetupError:
        raise
    except AutogradeError as exc:  # an unknown prompt class or prompt order, a custom prompt file's problems
        raise GraderSetupError(f"grader {config.name!r}: {exc}") from None
    return prompt, answer_prompt


class LLMGrader:
    """A prompt class + scoring mode over one LLM backend. Implements the ``Grader`` protocol."""

    def __init__(self, config: GraderConfig, options: CommonOptions, backend: Callable[[], LLMBackend]) -> None:
        """Check the prompt set-up first, then build the backend (``backend()`` may load a model)."""
        self.config = config
        self.options = options
        self.prompt, self.answer_prompt = resolve_prompts(config, options)
        self.order = config.prompt_order
        self.scoring = config.scoring
        self.llm = backend()
        self.answer_prefix = self.prompt.answer_prefix if self.scoring == "logits" else None
        if self.answer_prefix and not self.llm.continues_text():
            self.llm.close()
            raise GraderSetupError(
                f"grader {config.name!r}: logits scoring of {self.prompt.config_name} reads the label after "
                f"{self.answer_prefix.strip()!r}, which backend {self.llm.name} cannot continue (a chat API or a "
                "seq2seq model); set scoring: generate")

    @property
    def labels(self) -> list[str]:
        return list(self.prompt.labels)

    def close(self) -> None:
        self.llm.close()

    def usage(self) -> dict[str, int]:
        return self.llm.usage()

    def count_tokens(self, requests: list[GradeRequest]) -> TokenCount:
        """Every model input of ``requests`` counted with the backend's tokenizer (an endpoint's: approximated);
        output: what logits mode generates, or at most the token limit in generate mode."""
        approx = False

        def n(text: str) -> int:
            nonlocal approx
            counted = self.llm.count_input_tokens(text)
            if counted is None:
                approx = True
                return approximate_tokens(text)
            return counted

        n_in = n_out = 0
        bound = self.scoring == "generate"
        for r in requests:
            if self.prompt.kind == "verification":  # extraction, then one verification per gold answer
                assert self.answer_prompt is not None
                n_in += n(self.model_input(self.answer_prompt, r)[0])
                n_in += sum(n(self.model_input(self.prompt, r, gold=g)[0]) for g in r.gold_answers)
                n_out += self.options.answer_max_new_tokens + len(r.gold_answers) * self.options.max_new_tokens
                bound = True
                continue
            n_in += n(self.model_input(self.prompt, r)[0])
            if self.scoring == "logits":
                n_out += self.llm.logits_output_tokens
            else:
                n_out += (self.options.answer_max_new_tokens if self.prompt.kind == "extraction"
                          else self.options.max_new_tokens)
        return TokenCount(n_in, n_out, "approximation" if approx else "tokenizer", bound)

    # -- rendering ---------------------------------------------------------------------------------------------

    def model_input(
        self, prompt: PromptClass, request: GradeRequest, *, answer: str | None = None, gold: str | None = None
    ) -> tuple[str, bool]:
        """(exact model input for ``request`` under ``prompt``, whether its passage was truncated)."""

        prefix = self.answer_prefix if prompt is self.prompt and self.answer_prefix else ""

        def build(context: str) -> str:
            text = self.llm.wrap(render(prompt, request, self.order, context=context, answer=answer, gold=gold))
            return text + prefix  # logits scoring of an answer form: the label is the next token

        return self.llm.fit(build, request.passage_text)

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
            "backend": self.llm.name,
            "prompt_class": self.prompt.name,
            "prompt_version": self.prompt.version,
            "prompt_digest": self.prompt.digest(),
            "scoring": self.scoring,
            "prompt_order": self.order,
            "legacy_parse": o.legacy_parse,
            "tolerant_parse": o.tolerant_parse,
            "fuzzy_unanswerable": o.fuzzy_unanswerable,
        }
        if o.umbrela_parser is not None:
            ident["umbrela_parser"] = o.umbrela_parser
        if self.answer_prompt is not None:
            ident["answer_prompt"] = self.answer_prompt.config_name
            ident["answer_prompt_digest"] = self.answer_prompt.digest()
        if self.scoring == "generate" and self.prompt.kind != "extraction":
            ident["max_new_tokens"] = o.max_new_tokens
        if self.prompt.kind in ("extraction", "verification"):
            ident["answer_max_new_tokens"] = o.answer_max_new_tokens
        if self.scoring == "logits":
            ident["label_token_policy"] = LABEL_TOKEN_POLICY
        ident.update(self.llm.identity(self.labels if self.scoring == "logits" else None))
        return ident

    # -- grading -----------------------------------------------------------------------------------------------

    def safe_call(self, fn: Callable[..., list[Any]], inputs: list[str], *args: Any) -> list[Any]:
        """Call a model operation; an exception fails the whole call's items (transient), never raises."""
        if not inputs:
            return []
        try:
            out = fn(inputs, *args)
        except Exception as exc:  # one bad batch must not kill the shard
            logger.exception("grader %s: %s failed for %d inputs", self.config.name, fn.__name__, len(inputs))
            return [Failure(f"{type(exc).__name__}: {exc}", deterministic=False)] * len(inputs)
        if len(out) != len(inputs):
            return [Failure(f"backend returned {len(out)} results for {len(inputs)} inputs")] * len(inputs)
        return out

    def label_scores(self, inputs: list[str]) -> list[LabelScores | Generation | Failure]:
        """Logits scoring of final model inputs over this grader's labels (never raises)."""
        return self.safe_call(self.llm.label_probs, inputs, self.labels)

    def generate(self, inputs: list[str], max_new_tokens: int) -> list[Generation | Failure]:
        """Greedy generation for final model inputs (never raises)."""
        return self.safe_call(self.llm.generate, inputs, Decoding(max_new_tokens=max_new_tokens, temperature=None))

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        """Grade ``requests`` (one result each, in order); failures come back as results, never exceptions."""
        if not requests:
            return []
        flow = FLOWS.get(self.prompt.kind)
        if flow is not None:  # a multi-step flow (EXAM++ verification) drives this grader
            return flow(self, requests)
        fitted = [self.model_input(self.prompt, r) for r in requests]
        inputs = [t for t, _ in fitted]
        outs: Sequence[LabelScores | Generation | Failure]
        if self.scoring == "logits":
            outs = self.label_scores(inputs)
        else:
            max_new = self.options.answer_max_new_tokens if self.prompt.kind == "extraction" else self.options.max_new_tokens
            outs = self.generate(inputs, max_new)
        results: list[GradeResult] = []
        for req, (_, cut), out in zip(requests, fitted, outs, strict=True):
            extra = {"passage_truncated": True} if cut else {}
            results.append(self.result(req, out, extra))
        return results

    def result(self, req: GradeRequest, out: LabelScores | Generation | Failure, extra: dict[str, Any]) -> GradeResult:
        """One model output as a GradeResult (a Generation in logits mode: a backend without logprobs parses text)."""
        if isinstance(out, Failure):
            return failed(out)
        extra = {**out.extra, **extra}
        if isinstance(out, LabelScores):
            return result_from_label_probs(self.prompt, out.probs, extra=extra, raw=out.raw)
        parsed = parse_response(
            self.prompt, out.text, gold_answers=req.gold_answers, legacy=self.options.legacy_parse,
            tolerant=self.options.tolerant_parse, fuzzy=self.options.fuzzy_unanswerable,
            umbrela_parser=self.options.umbrela_parser,
        )
        if out.first_token_id is not None:
            extra["first_token_id"] = out.first_token_id
        answer = out.text.strip() if self.prompt.kind == "extraction" else parsed.label
        return result_from_parsed(parsed, out.text, answer=answer, extra=extra)
