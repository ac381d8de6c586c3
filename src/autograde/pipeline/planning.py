"""The plan of one model stage's jobs: pairs, what the cache holds, the prompts to compute, their tokens per shard,
and with a measurement the time of each job, start-up included.

Every model stage (grading, nugget assignment, the robustness audit, ...) plans its jobs with
:func:`plan_requests` over the requests its jobs will send, dealt into shards by query as the workflow deals them.
``autograde plan`` (:mod:`autograde.workflow.plan`) loops over the registered model stages and prints the plans.

A job's time is its start-up plus its prompts. The start-up is measured as a job pays it: a fresh Python process
that imports what a rule script imports (Snakemake's script preamble, the workflow context), validates the
experiment config and builds the model, then grades one warm-up pair (:func:`measure_startup`). The prompts' time
is extrapolated from N prompts timed in this process after a warm-up: tokens per second (input plus output) times
each shard's tokens.

>>> p = ShardPlan("1-of-2", pairs=10, to_compute=4, input_tokens=400, output_tokens=0)
>>> job_seconds(p, TimedSample(prompts=8, seconds=2.0, load_seconds=0.5, input_tokens=800, output_tokens=0,
...                            startup_seconds=3.0), output_at_most=False)
4.0
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from autograde.core.errors import AutogradeError
from autograde.core.log import logger
from autograde.grading.registry import backend

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.grading.base import Grader, GradeRequest
    from autograde.grading.spec import ModelSpec

__all__ = ["GraderPlan", "PlanOptions", "ShardPlan", "TimedSample", "job_seconds", "measure_grader",
           "measure_startup", "plan_cost", "plan_requests"]


@dataclass(frozen=True)
class PlanOptions:
    """How far a plan goes: ``measure`` N prompts per model on this node (0: no timing; also the start-up of a job);
    ``load_models``: build local models to count their tokens and read their cache without timing them;
    ``graders``: plan only these graders' grading (no other stage)."""

    measure: int = 0
    load_models: bool = False
    graders: tuple[str, ...] = ()


@dataclass
class ShardPlan:
    """One job: its pairs, the distinct prompts it computes, their tokens, and its extrapolated time."""

    shard: str
    pairs: int
    to_compute: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float | None = None


@dataclass
class TimedSample:
    """A short timed run on this node: ``prompts`` graded in ``seconds`` after a warm-up call that took
    ``load_seconds`` (the model's load in this process), reading ``input_tokens`` and writing ``output_tokens``;
    ``startup_seconds``: what a job pays before its first prompt, measured in a fresh process (None: not
    measured, the in-process load stands in)."""

    prompts: int
    seconds: float
    load_seconds: float
    input_tokens: int
    output_tokens: int
    startup_seconds: float | None = None
    failed: int = 0
    """Timed prompts that got no answer (an endpoint that is down): they make no rate."""

    @property
    def tokens_per_s(self) -> float:
        return (self.input_tokens + self.output_tokens) / self.seconds if self.seconds > 0 else 0.0

    @property
    def output_per_prompt(self) -> float:
        return self.output_tokens / self.prompts if self.prompts else 0.0

    @property
    def job_startup(self) -> float:
        return self.startup_seconds if self.startup_seconds is not None else self.load_seconds


@dataclass
class GraderPlan:
    """The plan of one model's jobs in one stage: counts, tokens, shards, and (measured) time and cost."""

    stage: str
    name: str
    backend: str
    pairs: int
    cached: int | None
    to_compute: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    counted_by: str = ""
    """``tokenizer`` (the grader's own), ``approximation`` (4 characters per token) or '' (not counted)."""
    output_at_most: bool = False
    shards: list[ShardPlan] = field(default_factory=list)
    measurement: TimedSample | None = None
    seconds: float | None = None
    """Extrapolated: every job one after another on this node, each with its start-up."""
    cost: float | None = None
    currency: str | None = None
    note: str = ""


def sample_prompts(requests: list[GradeRequest], misses: list[int], n: int) -> list[int]:
    """``n`` prompts to time, query by query in sorted query order (a job reads texts the same way)."""
    by_query: dict[str, list[int]] = {}
    for i in misses:
        by_query.setdefault(requests[i].query_id, []).append(i)
    out: list[int] = []
    for q in sorted(by_query):
        out += by_query[q][: n - len(out)]
        if len(out) >= n:
            break
    return out


def _warm_up_request() -> GradeRequest:
    from autograde.grading.base import GradeRequest as Request

    return Request("plan", "warm-up", "plan", "a warm-up passage", "plan/warm-up", "question", "a warm-up question?")


def measure_grader(grader: Grader, requests: list[GradeRequest], batch_size: int) -> TimedSample:
    """Grade ``requests`` once, timed, after a warm-up call on a made-up pair (it loads a lazily loaded model);
    nothing is written to the cache. A warm-up that fails (an endpoint that does not answer) is an
    :class:`~autograde.core.errors.EndpointError`: no time is made of it."""
    from autograde.core.errors import EndpointError

    t0 = time.perf_counter()
    warm = grader.grade_batch([_warm_up_request()])
    load = time.perf_counter() - t0
    if warm and all(r.parse_status == "failed" for r in warm):
        raise EndpointError(f"the warm-up prompt got no answer ({warm[0].error or 'no reply'}): nothing can be "
                            "timed (fix: start the model's endpoint, or plan without --measure)")
    before = grader.usage()
    t1 = time.perf_counter()
    failed = 0
    for k in range(0, len(requests), batch_size):
        results = grader.grade_batch(requests[k: k + batch_size])
        failed += sum(1 for r in results if r.parse_status == "failed")
    seconds = time.perf_counter() - t1
    after = grader.usage()
    return TimedSample(len(requests) - failed, round(seconds, 3), round(load, 3),
                       after["input_tokens"] - before["input_tokens"], after["output_tokens"] - before["output_tokens"],
                       failed=failed)


_STARTUP = r"""
import json, sys, time
t0 = time.perf_counter()
import snakemake.script  # the preamble of every rule script
from autograde.workflow.context import script_setup  # what a rule script imports
from autograde.config.experiment import validate_config
from autograde.config.model import GraderConfig
from autograde.grading.registry import make_grader
from autograde.core.runtime import set_threads
set_threads(None)  # the job's thread count, from the environment
t1 = time.perf_counter()
given = json.loads(sys.stdin.read())
validate_config(given["config"], "the experiment config")
t2 = time.perf_counter()
grader = make_grader(GraderConfig.model_validate(given["spec"]))
from autograde.grading.base import GradeRequest
grader.grade_batch([GradeRequest("plan", "warm-up", "plan", "a warm-up passage", "plan/warm-up", "question",
                                 "a warm-up question?")])
t3 = time.perf_counter()
grader.close()
print(json.dumps({"imports": t1 - t0, "config": t2 - t1, "model": t3 - t2}))
"""


def measure_startup(config: Config, spec: ModelSpec) -> float | None:
    """Seconds a job of ``spec`` spends before its first prompt, measured in a fresh Python process (with this
    process's thread count): the interpreter, the imports of a rule script, the config validation, the model's build
    and one warm-up pair. None when it cannot be measured here (logged)."""
    spec_data = {"name": "plan", **spec.model_dump(mode="json")}  # a grader's config (a model stage's spec)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _STARTUP], input=json.dumps(
        {"config": config.model_dump(mode="json", exclude_defaults=True), "spec": spec_data}), capture_output=True,
        text=True)
    total = time.perf_counter() - t0
    if res.returncode != 0:
        logger.warning("plan: the start-up of a job could not be measured: %s", res.stderr.strip()[-500:])
        return None
    logger.debug("plan: job start-up %s", res.stdout.strip())
    return round(total, 3)


def job_seconds(shard: ShardPlan, m: TimedSample, output_at_most: bool) -> float:
    """One job's time: its start-up and its prompts at the measured rate (output tokens as measured per prompt
    where the plan has only their limit)."""
    out = round(m.output_per_prompt * shard.to_compute) if output_at_most else (shard.output_tokens or 0)
    rate = m.tokens_per_s
    compute = ((shard.input_tokens or 0) + out) / rate if rate > 0 else 0.0
    return round(m.job_startup + compute, 1)


def plan_cost(options: dict[str, Any], input_tokens: int | None, output_tokens: int | None
              ) -> tuple[float | None, str | None]:
    """The cost of the tokens at the prices per million in a model's ``options`` (None when no price is set)."""
    pin, pout = options.get("input_price_per_million"), options.get("output_price_per_million")
    if input_tokens is None or (pin is None and pout is None):
        return None, None
    cost = input_tokens / 1e6 * float(pin or 0) + (output_tokens or 0) / 1e6 * float(pout or 0)
    return round(cost, 4), str(options.get("price_currency") or "USD")


def not_built_here(info_environment: str, local_model: bool, options: PlanOptions) -> str:
    """Why a model is not built for its plan ('' when it is)."""
    if info_environment != "main":
        return "not built here (it runs in the vLLM environment): prompts counted, cache not checked"
    if local_model and not (options.measure or options.load_models):
        return ("cache and tokens not checked: building this model loads it (its tokenizer comes with it); --measure "
                "or --load-models loads it")
    return ""


def plan_requests(config: Config, stage: str, g: ModelSpec, name: str, requests: list[GradeRequest],
                  queries: dict[str, str], n_shards: int, options: PlanOptions) -> GraderPlan:
    """The plan of one model's jobs over ``requests``, dealt into ``n_shards`` shards by query as the workflow does."""
    from autograde.grading.cache import GradeCache, cache_key
    from autograde.grading.registry import make_grader
    from autograde.pipeline.shards import shard_assignment

    assert g.backend is not None
    info = backend(g.backend)
    of_query = shard_assignment(list(queries), n_shards)
    plan = GraderPlan(stage, name, g.backend, len(requests), None, len(requests))
    plan.note = not_built_here(info.environment, info.local_model, options)
    if plan.note:
        return plan
    try:
        grader = make_grader(g)  # type: ignore[arg-type]
    except AutogradeError as exc:  # the other plans still come
        plan.note = f"not built: {exc}"
        return plan
    try:
        identity = grader.identity()
        keys = [cache_key(grader.render(r), identity) for r in requests]
        stored = GradeCache.open_readonly(config.grading.cache_dir, identity).load(set(keys))
        if hasattr(grader, "use_cache"):  # what it keeps of its own (the encoder's vectors) counts no tokens
            grader.use_cache(config.grading.cache_dir, readonly=True)
        plan.cached = sum(1 for k in keys if k in stored)
        shard_misses: list[list[int]] = [[] for _ in range(n_shards)]
        seen: list[set[str]] = [set() for _ in range(n_shards)]
        shard_pairs = [0] * n_shards
        for i, (r, k) in enumerate(zip(requests, keys, strict=True)):
            s = of_query.get(r.query_id, 0)
            shard_pairs[s] += 1
            if k not in stored and k not in seen[s]:  # each job computes each distinct uncached input once
                seen[s].add(k)
                shard_misses[s].append(i)
        plan.to_compute = sum(len(m) for m in shard_misses)
        bound = False
        for s, misses in enumerate(shard_misses):
            count = grader.count_tokens([requests[i] for i in misses])
            plan.counted_by, bound = count.counted_by, bound or count.output_at_most
            plan.shards.append(ShardPlan(f"{s + 1}-of-{n_shards}", shard_pairs[s], len(misses), count.input_tokens,
                                         count.output_tokens))
        plan.input_tokens = sum(s.input_tokens or 0 for s in plan.shards)
        plan.output_tokens = sum(s.output_tokens or 0 for s in plan.shards)
        plan.output_at_most = bound
        if options.measure and plan.to_compute:
            sample = sample_prompts(requests, [i for m in shard_misses for i in m], options.measure)
            logger.info("plan: timing %s %s on %d prompt(s) on this node", stage, name, len(sample))
            plan.measurement = measure_grader(grader, [requests[i] for i in sample], config.grading.batch_size)
    finally:
        grader.close()
    m = plan.measurement
    if m is not None:
        m.startup_seconds = measure_startup(config, g)
    if m is not None and m.tokens_per_s > 0:
        for sp in plan.shards:
            if plan.output_at_most:
                sp.output_tokens = round(m.output_per_prompt * sp.to_compute)
            sp.seconds = job_seconds(sp, m, output_at_most=False)
        plan.output_tokens = sum(s.output_tokens or 0 for s in plan.shards)
        plan.output_at_most = False
        plan.seconds = round(sum(s.seconds or 0.0 for s in plan.shards), 1)
    plan.cost, plan.currency = plan_cost(g.options, plan.input_tokens, plan.output_tokens)
    return plan
