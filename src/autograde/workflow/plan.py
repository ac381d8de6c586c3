"""The plan of a run (``autograde plan``): per test bank to generate, grader, nugget stage and robustness audit that
runs a model, the
pairs, what the grade cache holds, the prompts to compute, their input tokens counted with the grader's own
tokenizer and the expected output tokens, per shard; with ``--measure N``, a short timed run of N prompts on this
node, the time extrapolated per shard and in total, and the cost where the endpoint's prices per token are
configured.

Counting is exactly what the grading jobs do: the same pool (``results/pool/pool.parquet`` when current), the same
shards (whole queries dealt round-robin), the same cache keys, and each job computes each distinct uncached input
once. Tokens are what the model reads: every prompt's tokens for a language model (an endpoint's tokenizer is not
here: one token per 4 characters, said so), and each distinct item and passage text once per job for the embedded
encoder. The grading jobs record the tokens their model really processed (``input_tokens``, ``output_tokens`` in
the grades' ``.stats.json``), so a plan can be checked against the run it planned.

The time: the N prompts are taken query by query (so a sample reads texts the way a job does), graded once without
touching the cache after a warm-up call that loads the model, and the rate in tokens per second (input plus
output) extrapolates each shard's tokens; a shard's time adds the model's load time. The total is the shards one
after another on this node. Local models (hf) are loaded only with ``--measure``: their tokenizer comes with them.
Test-bank generation is counted (first-round prompts, cached answers, tokens, at most ``max_new_tokens`` out each),
not timed.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import AutogradeError
from autograde.core.log import logger
from autograde.grading.registry import backend

if TYPE_CHECKING:
    from autograde.config.banks import BankGenerationConfig
    from autograde.config.model import Config, GraderConfig
    from autograde.grading.base import Grader, GradeRequest
    from autograde.pipeline.ingest import Inputs

__all__ = ["GraderPlan", "ShardPlan", "TimedSample", "format_plan", "plan_json", "plan_run"]


@dataclass
class ShardPlan:
    """One grading job: its pairs, the distinct prompts it computes, their tokens, and its extrapolated time."""

    shard: str
    pairs: int
    to_compute: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float | None = None


@dataclass
class TimedSample:
    """A short timed run on this node: ``prompts`` graded in ``seconds`` (after a warm-up that took
    ``load_seconds``, the model's load), reading ``input_tokens`` and writing ``output_tokens``."""

    prompts: int
    seconds: float
    load_seconds: float
    input_tokens: int
    output_tokens: int

    @property
    def tokens_per_s(self) -> float:
        return (self.input_tokens + self.output_tokens) / self.seconds if self.seconds > 0 else 0.0

    @property
    def output_per_prompt(self) -> float:
        return self.output_tokens / self.prompts if self.prompts else 0.0


@dataclass
class GraderPlan:
    """The plan of one grader's grading: counts, tokens, shards, and (measured) time and cost."""

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
    """Extrapolated: every shard one after another on this node, each with the model's load."""
    cost: float | None = None
    currency: str | None = None
    note: str = ""


def _sample(requests: list[GradeRequest], misses: list[int], n: int) -> list[int]:
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


def measure_grader(grader: Grader, requests: list[GradeRequest], batch_size: int) -> TimedSample:
    """Grade ``requests`` once, timed, after a warm-up call on a made-up pair (it loads a lazily loaded model);
    nothing is written to the cache. A request that got no answer (a server that is down, a timeout) is a failure,
    not a timing: an :class:`~autograde.core.errors.EndpointError` says how many failed and why (the first
    reason), with the fix. An answer the parser cannot read still took the model's time and counts."""
    from autograde.core.errors import EndpointError
    from autograde.grading.base import GradeRequest as Request

    def failed(results: list[Any], asked: int, what: str) -> None:
        bad = [r for r in results if r.parse_status == "failed"]
        if bad:
            raise EndpointError(f"plan --measure: {len(bad)} of {asked} {what} got no answer from the grader's model "
                                f"({bad[0].error or 'no reason given'}); a time measured on failures would not be "
                                "the model's (fix: start the model's server or correct its options.base_url: "
                                "'autograde doctor' checks the endpoint; or plan without --measure)")

    t0 = time.perf_counter()
    failed(grader.grade_batch([Request("plan", "warm-up", "plan", "a warm-up passage", "plan/warm-up", "question",
                                       "a warm-up question?")]), 1, "warm-up prompt")
    load = time.perf_counter() - t0
    before = grader.usage()
    t1 = time.perf_counter()
    results: list[Any] = []
    for k in range(0, len(requests), batch_size):
        results += grader.grade_batch(requests[k: k + batch_size])
    seconds = time.perf_counter() - t1
    failed(results, len(requests), "timed prompts")
    after = grader.usage()
    return TimedSample(len(requests), round(seconds, 3), round(load, 3), after["input_tokens"] - before["input_tokens"],
                       after["output_tokens"] - before["output_tokens"])


def _cost(g: GraderConfig | BankGenerationConfig, input_tokens: int | None,
          output_tokens: int | None) -> tuple[float | None, str | None]:
    opts = g.options
    pin, pout = opts.get("input_price_per_million"), opts.get("output_price_per_million")
    if input_tokens is None or (pin is None and pout is None):
        return None, None
    cost = input_tokens / 1e6 * float(pin or 0) + (output_tokens or 0) / 1e6 * float(pout or 0)
    return round(cost, 4), str(opts.get("price_currency") or "USD")


def plan_grader(config: Config, g: GraderConfig, pool: Any, queries: dict[str, str], measure: int = 0,
                load_models: bool = False) -> GraderPlan:
    """The plan of one grader's grading jobs (see the module doc)."""
    from autograde.grading.shard import build_requests
    from autograde.pipeline.stages import items_for_grader

    if g.bank in config.bank_generation and not Path(config.banks[g.bank]).exists():
        return GraderPlan("grading", g.name, g.backend, 0, None, 0, note=f"bank {g.bank!r} is not generated yet: its "
                          "prompts are counted once it exists")
    requests = build_requests(pool, queries, items_for_grader(config, g.name, queries))
    return plan_requests(config, "grading", g, requests, queries, config.grading.shards, measure, load_models)


def plan_nuggets(config: Config, queries: dict[str, str], measure: int = 0,
                 load_models: bool = False) -> list[GraderPlan]:
    """The nugget stages that run a model: the importance of the nuggets the bank leaves open, and each
    whole-answer assessor's (answer, nugget) pairs."""
    from autograde.core.errors import Problems
    from autograde.core.paths import expand_globs
    from autograde.nuggets.assign import answers_table, assignment_requests, whole_answer_grader
    from autograde.nuggets.importance import importance_grader_config, importance_requests
    from autograde.nuggets.stages import read_nugget_bank

    n = config.nuggets
    if n is None:
        return []
    bank = read_nugget_bank(config, queries)
    shards = n.shards or config.grading.shards
    out = []
    if n.importance is not None:
        open_items = [it for it in bank.items if (it.info or {}).get("importance") is None]
        out.append(plan_requests(config, "nugget importance", importance_grader_config(n),
                                 importance_requests(open_items, queries), queries, shards, measure, load_models))
    assessors = [a for a in n.assessors if a.backend is not None]
    if assessors:
        problems = Problems()
        answers = answers_table(expand_globs(config.data.answers), problems)
        problems.raise_if_any()
        requests = assignment_requests(answers, queries, bank.by_query())
        for a in assessors:
            out.append(plan_requests(config, "nugget assignment", whole_answer_grader(a, n.bank), requests, queries,
                                     shards, measure, load_models))
    return out


def plan_banks(config: Config, queries: dict[str, str], measure: int = 0,
               load_models: bool = False) -> list[GraderPlan]:
    """Test-bank generation (``bank_generation:``): one first-round prompt per query of each bank, dealt into the
    grading shards as the workflow does; cached answers are not asked again. Output tokens are at most
    ``decoding.max_new_tokens`` per prompt; repair prompts are not counted (they run only for an answer that does not
    validate: at most ``repair_attempts`` more per query)."""
    from autograde.banks.cache import GenerationCache
    from autograde.banks.generate import make_generator, query_prompts
    from autograde.grading.base import approximate_tokens
    from autograde.grading.cache import cache_key
    from autograde.pipeline.shards import shard_assignment

    plans = []
    n_shards = config.grading.shards
    for name, cfg in config.bank_generation.items():
        plan = GraderPlan("bank generation", name, cfg.backend, len(queries), None, len(queries))
        plans.append(plan)
        info = backend(cfg.backend)
        if info.environment != "main":
            plan.note = "not built here (it runs in the vLLM environment): prompts counted, cache not checked"
            continue
        if info.local_model and not (measure or load_models):
            plan.note = ("cache and tokens not checked: building this model loads it (its tokenizer comes with it); "
                         "--measure or --load-models loads it")
            continue
        try:
            gen = make_generator(name, cfg, config.grading.cache_dir)
        except AutogradeError as exc:
            plan.note = f"not built: {exc}"
            continue
        try:
            prompts = query_prompts(queries, cfg.subtopic_separator)
            inputs = [gen.backend.wrap(gen.first_prompt(q)) for q in prompts]
            identity = gen.identity()
            keys = [cache_key(x, identity) for x in inputs]
            stored = GenerationCache(config.grading.cache_dir, identity, readonly=True).texts(set(keys))
            plan.cached = sum(1 for k in keys if k in stored)
            of_query = shard_assignment(list(queries), n_shards)
            todo = [i for i, k in enumerate(keys) if k not in stored]
            plan.to_compute = len(todo)
            plan.counted_by = "tokenizer"
            plan.output_at_most = True
            for s in range(n_shards):
                mine = [i for i in todo if of_query[prompts[i].query_id] == s]
                n_in = 0
                for i in mine:
                    counted = gen.backend.count_input_tokens(inputs[i])
                    if counted is None:
                        plan.counted_by = "approximation"
                        counted = approximate_tokens(inputs[i])
                    n_in += counted
                plan.shards.append(ShardPlan(f"{s + 1}-of-{n_shards}", sum(1 for q in queries if of_query[q] == s),
                                             len(mine), n_in, len(mine) * cfg.decoding.max_new_tokens))
            plan.input_tokens = sum(sp.input_tokens or 0 for sp in plan.shards)
            plan.output_tokens = sum(sp.output_tokens or 0 for sp in plan.shards)
            plan.cost, plan.currency = _cost(cfg, plan.input_tokens, plan.output_tokens)
        finally:
            gen.close()
    return plans


def plan_audit(config: Config, pool: Any, queries: dict[str, str], measure: int = 0,
               load_models: bool = False) -> list[GraderPlan]:
    """The robustness audit of each grader the workflow audits (one job each): its perturbed copies' prompts (the
    sampled pairs themselves are the grading jobs' prompts); the copies of the target system's top passages only
    once the grader's grades exist (they choose the system)."""
    from autograde.audit.robustness import audit_requests
    from autograde.audit.stages import robustness_inputs

    if config.audit is None:
        return []
    rc = config.audit.robustness
    texts = {(q, p): t for q, p, t in pool[["query_id", "passage_id", "text"]].itertuples(index=False)}
    out = []
    for name in rc.graders:
        inputs, _threshold, keywords = robustness_inputs(config, name, queries, texts, rc, warn=False)
        try:
            requests = audit_requests(name, inputs, rc, **keywords).perturbed
        except AutogradeError as exc:
            out.append(GraderPlan("audit robustness", name, config.grader(name).backend, 0, None, 0,
                                  note=f"not planned: {exc}"))
            continue
        plan = plan_requests(config, "audit robustness", config.grader(name), requests, queries, 1, measure,
                             load_models)
        if inputs.rankings is None and rc.system_perturbations:
            plan.note = "; ".join(filter(None, [plan.note, "the target system's perturbed passages are counted once "
                                                "the grader's grades exist (they choose the system)"]))
        out.append(plan)
    return out


def plan_requests(config: Config, stage: str, g: GraderConfig, requests: list[GradeRequest],
                  queries: dict[str, str], n_shards: int, measure: int = 0, load_models: bool = False) -> GraderPlan:
    """The plan of one model's jobs over ``requests``, dealt into ``n_shards`` shards by query as the workflow does."""
    from autograde.grading.cache import GradeCache, cache_key
    from autograde.grading.registry import make_grader
    from autograde.pipeline.shards import shard_assignment

    info = backend(g.backend)
    of_query = shard_assignment(list(queries), n_shards)
    plan = GraderPlan(stage, g.name, g.backend, len(requests), None, len(requests))
    if info.environment != "main":
        plan.note = "not built here (it runs in the vLLM environment): prompts counted, cache not checked"
        return plan
    if info.local_model and not (measure or load_models):
        plan.note = ("cache and tokens not checked: building this model loads it (its tokenizer comes with it); "
                     "--measure or --load-models loads it")
        return plan
    try:
        grader = make_grader(g)
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
        if measure and plan.to_compute:
            sample = _sample(requests, [i for m in shard_misses for i in m], measure)
            logger.info("plan: timing %s %s on %d prompt(s) on this node", stage, g.name, len(sample))
            plan.measurement = measure_grader(grader, [requests[i] for i in sample], config.grading.batch_size)
    finally:
        grader.close()
    m = plan.measurement
    if m is not None and m.tokens_per_s > 0:
        for sp in plan.shards:
            if not sp.to_compute:
                sp.seconds = 0.0
                continue
            out = round(m.output_per_prompt * sp.to_compute) if plan.output_at_most else (sp.output_tokens or 0)
            sp.output_tokens = out
            sp.seconds = round(m.load_seconds + ((sp.input_tokens or 0) + out) / m.tokens_per_s, 1)
        plan.output_tokens = sum(s.output_tokens or 0 for s in plan.shards)
        plan.output_at_most = False
        plan.seconds = round(sum(s.seconds or 0.0 for s in plan.shards), 1)
    plan.cost, plan.currency = _cost(g, plan.input_tokens, plan.output_tokens)
    return plan


def plan_run(config: Config, config_path: str | Path | None = None, measure: int = 0,
             graders: list[str] | None = None, inputs: Inputs | None = None,
             load_models: bool = False) -> tuple[list[GraderPlan], str]:
    """The plan of every grader (or those named) and of the nugget stages and robustness audits that run a model
    (when no grader is named); returns the plans and where the pool came from."""
    from autograde.workflow.estimate import pool_and_queries

    pool, queries, source = pool_and_queries(config, inputs, config_path)
    chosen = [config.grader(n) for n in graders] if graders else list(config.graders)
    plans = [plan_grader(config, g, pool, queries, measure, load_models) for g in chosen]
    if not graders:
        plans = plan_banks(config, queries, measure, load_models) + plans
        plans += plan_nuggets(config, queries, measure, load_models)
        plans += plan_audit(config, pool, queries, measure, load_models)
    return plans, source


def _duration(seconds: float | None) -> str:
    from autograde.core.log import format_duration

    return "-" if seconds is None else format_duration(seconds)


def format_plan(plans: list[GraderPlan], source: str) -> str:
    """The plan as a table per grader, with its shards, the time and the cost; one line on how tokens are counted."""
    lines = [f"plan ({source}):", "",
             "| stage | grader | backend | pairs | cached | to compute | input tokens | output tokens | time | cost |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p in plans:
        tin = "-" if p.input_tokens is None else f"{p.input_tokens:,}" + (" (approx.)" if p.counted_by ==
                                                                            "approximation" else "")
        tout = "-" if p.output_tokens is None else ("<= " if p.output_at_most else "") + f"{p.output_tokens:,}"
        cached = "-" if p.cached is None else f"{p.cached:,}"
        cost = "-" if p.cost is None else f"{p.cost:,.2f} {p.currency}"
        lines.append(f"| {p.stage} | {p.name} | {p.backend} | {p.pairs:,} | {cached} | {p.to_compute:,} | {tin} | "
                     f"{tout} | {_duration(p.seconds)} | {cost} |")
    for p in plans:
        if p.note:
            lines.append(f"- {p.name}: {p.note}")
        if p.measurement is not None:
            m = p.measurement
            lines.append(f"- {p.name}: measured here: {m.prompts} prompt(s) in {m.seconds:.2f} s after a "
                         f"{m.load_seconds:.1f} s model load ({m.tokens_per_s:,.0f} tokens/s); per shard: " +
                         ", ".join(f"{s.shard} {s.to_compute:,} prompts {_duration(s.seconds)}" for s in p.shards))
        elif p.shards:
            lines.append(f"- {p.name}: per shard: " + ", ".join(f"{s.shard} {s.to_compute:,} prompts"
                                                                 for s in p.shards))
    if any(p.counted_by == "approximation" for p in plans):
        lines.append("- tokens marked approx.: an endpoint counts with its own tokenizer; 1 token per 4 characters")
    if any(p.output_at_most for p in plans):
        lines.append("- output tokens marked <=: generate mode's token limit (the answers may be shorter; --measure "
                     "counts them)")
    if any(p.seconds is not None for p in plans):
        total = sum(p.seconds or 0.0 for p in plans)
        lines.append(f"- time: extrapolated from the measurement, shards one after another on this node: "
                     f"{_duration(total)} in total")
    else:
        lines.append("- time: --measure N times N prompts per grader on this node and extrapolates per shard")
    return "\n".join(lines) + "\n"


def plan_json(plans: list[GraderPlan], source: str) -> str:
    return json.dumps({"pool": source, "graders": [asdict(p) for p in plans]}, indent=2) + "\n"
