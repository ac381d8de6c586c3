"""The ``openai`` backend: any OpenAI-compatible chat completions endpoint (OpenAI, ``vllm serve``, ...).

Config example::

    graders:
      - name: llama-qsr
        backend: openai
        model: meta-llama/Llama-3.1-8B-Instruct       # the server's model name
        prompt_class: QuestionSelfRatedUnanswerablePromptWithChoices
        scoring: logits
        options: {base_url: "http://gpu01:8000/v1", api_key_env: VLLM_API_KEY, concurrency: 32}

The API key is read from the environment variable named by ``api_key_env`` when requests are made; it is never
stored on the grader, in its identity, in results or in log messages. For a local server without a key, an
unset variable gives the dummy key ``EMPTY`` (only when ``base_url`` is set).

Requests run concurrently (``asyncio.Semaphore(concurrency)``) and are retried by this module, not by the
client (its ``max_retries`` is 0): on 408/409/429/5xx, timeouts and connection errors, with exponential backoff
and full jitter (honouring ``Retry-After``), up to ``max_retries`` times. What still fails comes back as
``parse_status="failed"``, ``deterministic=False`` (never cached, retried on the next run).

Logits mode asks for ``logprobs``/``top_logprobs`` of the first generated token and sums the probability of the
tokens that spell a label; if the server offers no logprobs (or no label is in the top-k), the text is parsed.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pydantic import Field

from autograde.core.errors import AutogradeError, GraderSetupError
from autograde.core.log import logger
from autograde.grading.backend import Decoding, Failure, Generation, LabelScores, LLMBackend
from autograde.grading.labels import label_probs_from_text_logprobs
from autograde.grading.llm_grader import CommonOptions, LLMGrader
from autograde.grading.prompts import get_prompt, load_custom_prompts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autograde.config.model import GraderConfig

RETRY_STATUS = frozenset({408, 409, 429})
DUMMY_KEY = "EMPTY"


class Options(CommonOptions):
    """``options:`` of an ``openai`` grader."""

    base_url: str | None = Field(default=None, description="endpoint, e.g. http://host:8000/v1 (None: api.openai.com)")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the API key")
    model_revision: str | None = Field(
        default=None, description="model snapshot/revision for the identity (API model names can change behind you)"
    )
    concurrency: int = Field(default=8, ge=1, le=1024, description="requests in flight at once")
    max_retries: int = Field(default=5, ge=0, le=100, description="retries per request on 408/409/429/5xx/timeouts")
    timeout_s: float = Field(default=60.0, gt=0, description="per-request timeout (seconds)")
    backoff_base_s: float = Field(default=1.0, ge=0, description="first retry waits up to this long (doubling)")
    backoff_max_s: float = Field(default=30.0, ge=0, description="cap on one retry wait")
    top_logprobs: int = Field(default=20, ge=1, le=20, description="logits mode: top-k logprobs of the first token")
    logits_max_tokens: int = Field(default=1, ge=1, le=64, description="logits mode: tokens generated per request")
    temperature: float = Field(default=0.0, ge=0, description="sampling temperature (0: greedy)")
    seed: int | None = Field(default=0, description="sampling seed sent to the server (None: not sent)")
    system_prompt: str | None = Field(default=None, description="system message (None: none)")
    max_passage_words: int | None = Field(default=None, ge=1, description="cut passages to this many words (None: no cut)")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="extra JSON fields (e.g. vLLM guided decoding)")
    input_price_per_million: float | None = Field(
        default=None, ge=0, description="price of one million input (prompt) tokens, for the cost in `autograde plan` "
        "(None: no cost shown)")
    output_price_per_million: float | None = Field(
        default=None, ge=0, description="price of one million output (completion) tokens, for the cost in "
        "`autograde plan`")
    price_currency: str = Field(default="USD", min_length=1, max_length=8,
                                description="currency of the two prices (only shown)")


def _run_sync(factory: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run a coroutine to completion from sync code (in a helper thread if a loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="autograde-openai")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class OpenAIBackend(LLMBackend):
    """A client of an OpenAI-compatible chat completions API."""

    name = "openai"

    def __init__(self, model: str | None, options: Options, owner: str = "openai") -> None:
        """Check the set-up (no request is made until used); ``owner`` names the grader or bank in logs."""
        import openai  # noqa: F401 - fail early with the install hint if missing

        if not model:
            raise GraderSetupError(f"{owner!r} (backend openai) needs model: the server's model name")
        self.owner = owner
        self.model = model
        self.options: Options = options
        if options.base_url is None and not os.environ.get(options.api_key_env):
            raise GraderSetupError(
                f"{owner!r}: environment variable {options.api_key_env} is not set "
                "(export the API key there, or set options.api_key_env; local servers: set options.base_url)"
            )
        self.stats = {"requests": 0, "retries": 0, "failed": 0}
        self.logits_output_tokens = options.logits_max_tokens

    # -- rendering ---------------------------------------------------------------------------------------------

    def continues_text(self) -> bool:
        return False  # a chat completions API answers in a new assistant turn: no answer prefix to continue

    def fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        n = self.options.max_passage_words
        if n is None:
            return build(passage), False
        ends = [m.end() for m in re.finditer(r"\S+", passage)]
        if len(ends) <= n:
            return build(passage), False
        return build(passage[: ends[n - 1]]), True

    def identity(self, labels: Sequence[str] | None = None) -> dict[str, Any]:
        o = self.options
        logits = labels is not None
        return {
            "model": self.model,
            "model_revision": o.model_revision,
            "temperature": o.temperature,
            "seed": o.seed,
            "system_prompt": o.system_prompt,
            "max_passage_words": o.max_passage_words,
            "top_logprobs": o.top_logprobs if logits else None,
            "logits_max_tokens": o.logits_max_tokens if logits else None,
            "extra_body": o.extra_body,
        }

    # -- requests ----------------------------------------------------------------------------------------------

    def _api_key(self) -> str:
        key = os.environ.get(self.options.api_key_env)
        if key:
            return key
        if self.options.base_url is None:
            raise GraderSetupError(f"environment variable {self.options.api_key_env} is not set")
        return DUMMY_KEY

    def _payload(self, text: str, max_tokens: int, logprobs: bool, decoding: Decoding | None = None) -> dict[str, Any]:
        o = self.options
        messages = [{"role": "system", "content": o.system_prompt}] if o.system_prompt is not None else []
        messages.append({"role": "user", "content": text})
        sampled = decoding is not None and decoding.temperature is not None
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                   "temperature": decoding.temperature if sampled else o.temperature}  # type: ignore[union-attr]
        if sampled and decoding.top_p != 1.0:  # type: ignore[union-attr]
            payload["top_p"] = decoding.top_p  # type: ignore[union-attr]
        seed = decoding.seed if sampled else o.seed  # type: ignore[union-attr]
        if seed is not None:
            payload["seed"] = seed
        if logprobs:
            payload["logprobs"] = True
            payload["top_logprobs"] = o.top_logprobs
        if o.extra_body:
            payload["extra_body"] = dict(o.extra_body)
        return payload

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        o = self.options
        delay = random.uniform(0.0, min(o.backoff_max_s, o.backoff_base_s * 2**attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, o.backoff_max_s))
        return delay

    async def _call(self, client: Any, sem: asyncio.Semaphore, payload: dict[str, Any], key: str) -> Any:
        """One request with retries; returns the completion or a Failure (never raises)."""
        import openai

        last = "no attempt"
        for attempt in range(self.options.max_retries + 1):
            retry_after: float | None = None
            async with sem:
                self.stats["requests"] += 1
                try:
                    reply = await client.chat.completions.create(**payload, timeout=self.options.timeout_s)
                    problem = _reply_problem(reply)
                    if problem is None:
                        return reply
                    last = problem  # an empty or malformed reply: retried, then fails this request only
                except openai.APIStatusError as exc:
                    last = _scrub(f"HTTP {exc.status_code}: {exc.message}", key)
                    if exc.status_code not in RETRY_STATUS and exc.status_code < 500:
                        return Failure(last, deterministic=False)
                    retry_after = _retry_after(exc)
                except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                    last = _scrub(f"{type(exc).__name__}: {exc}", key)
                except openai.OpenAIError as exc:
                    return Failure(_scrub(f"{type(exc).__name__}: {exc}", key), deterministic=False)
                except Exception as exc:  # e.g. a reply that is not JSON: fails this request only
                    return Failure(_scrub(f"unusable reply ({type(exc).__name__}: {exc})", key), deterministic=False)
            if attempt < self.options.max_retries:
                self.stats["retries"] += 1
                await asyncio.sleep(self._backoff(attempt, retry_after))
        return Failure(f"gave up after {self.options.max_retries + 1} attempts; last error: {last}", deterministic=False)

    async def _call_all(self, payloads: list[dict[str, Any]]) -> list[Any]:
        import openai

        key = self._api_key()
        client = openai.AsyncOpenAI(api_key=key, base_url=self.options.base_url, max_retries=0,
                                    timeout=self.options.timeout_s)
        try:
            sem = asyncio.Semaphore(self.options.concurrency)
            return await asyncio.gather(*(self._call(client, sem, p, key) for p in payloads))
        finally:
            await client.close()

    def _run(self, payloads: list[dict[str, Any]]) -> list[Any]:
        before = dict(self.stats)
        out = _run_sync(lambda: self._call_all(payloads))
        n_failed = sum(isinstance(o, Failure) for o in out)
        self.stats["failed"] += n_failed
        for o in out:  # the tokens the endpoint says it processed (it counts with its own tokenizer)
            usage = None if isinstance(o, Failure) else getattr(o, "usage", None)
            if usage is not None:
                self.record_usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
        logger.info("openai %s: %d prompts, %d requests, %d retries, %d failed", self.owner,
                    len(payloads), self.stats["requests"] - before["requests"],
                    self.stats["retries"] - before["retries"], n_failed)
        return out

    # -- model operations --------------------------------------------------------------------------------------

    def label_probs(self, inputs: list[str], labels: Sequence[str]) -> list[LabelScores | Generation | Failure]:
        labels = list(labels)
        outs = self._run([self._payload(t, self.options.logits_max_tokens, True) for t in inputs])
        results: list[LabelScores | Generation | Failure] = []
        for out in outs:
            if isinstance(out, Failure):
                results.append(out)
                continue
            choice = out.choices[0]
            text = choice.message.content or ""
            content = getattr(choice.logprobs, "content", None) if choice.logprobs is not None else None
            if content:
                top = [(t.token, t.logprob) for t in (content[0].top_logprobs or [])]
                if not top:
                    top = [(content[0].token, content[0].logprob)]
                probs = label_probs_from_text_logprobs(labels, top)
                if sum(probs.values()) > 0:
                    results.append(LabelScores(probs, raw=text, extra={"top_token": top[0][0]}))
                    continue
                results.append(Generation(text, extra={"scored_by": "text (no label in top_logprobs)"}))
            else:
                results.append(Generation(text, extra={"scored_by": "text (server offers no logprobs)"}))
        return results

    def generate(self, inputs: list[str], decoding: Decoding) -> list[Generation | Failure]:
        outs = self._run([self._payload(t, decoding.max_new_tokens, False, decoding) for t in inputs])
        return [o if isinstance(o, Failure) else Generation(o.choices[0].message.content or "") for o in outs]


def _reply_problem(reply: Any) -> str | None:
    """Why a chat completion cannot be used (no choices, no message), or None."""
    choices = getattr(reply, "choices", None)
    if not choices:
        return "unusable reply: the completion has no choices"
    if getattr(choices[0], "message", None) is None:
        return "unusable reply: the first choice has no message"
    return None


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _scrub(message: str, key: str) -> str:
    """Remove the API key from an error message (defence in depth: messages come from the server)."""
    return message.replace(key, "***") if key and key != DUMMY_KEY else message


def make_backend(model: str | None, options: Options, owner: str = "openai") -> OpenAIBackend:
    """An ``openai`` client (for graders and the test-bank generator)."""
    return OpenAIBackend(model, options, owner)


def with_prompt_system_message(config: GraderConfig, options: Options) -> Options:
    """``options`` with the prompt's own system message (UMBRELA's GPT judge sends one) where ``system_prompt`` is
    unset; an unknown prompt class is reported by the grader's prompt checks, not here."""
    if options.system_prompt is not None or not config.prompt_class:
        return options
    try:
        if options.custom_prompts:
            load_custom_prompts(options.custom_prompts)
        message = get_prompt(config.prompt_class).system_message
    except AutogradeError:
        return options
    return options.model_copy(update={"system_prompt": message}) if message is not None else options


def make_grader(config: GraderConfig, options: Options) -> LLMGrader:
    """Build an ``openai`` grader (no request is made until grading)."""
    options = with_prompt_system_message(config, options)
    return LLMGrader(config, options, lambda: make_backend(config.model, options, config.name))
