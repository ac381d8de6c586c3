"""The plan of a run (``autograde plan``): per model stage of every feature (grading, test-bank generation, nugget
importance and assignment, the robustness audit, ...) and per model it runs, the pairs, what the cache holds, the
prompts to compute, their input tokens counted with the model's own tokenizer and the expected output tokens, per
job; with ``--measure N``, a short timed run of N prompts on this node and the start-up of a job measured in a fresh
process, the time of each job extrapolated, and the cost where the endpoint's prices per token are configured.

The stages come from the registered features (:func:`autograde.workflow.features.model_stages`: a feature's model
stage is planned the day it is registered). Counting is exactly what the jobs do: the same pool
(``results/pool/pool.parquet`` when current), the same shards (whole queries dealt round-robin), the same cache
keys, and each job computes each distinct uncached input once (:mod:`autograde.pipeline.planning`). The grading jobs
record the tokens their model really processed (``input_tokens``, ``output_tokens`` in the grades' ``.stats.json``),
so a plan can be checked against the run it planned.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from autograde.grading.registry import BACKENDS
from autograde.pipeline.planning import GraderPlan, PlanOptions

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.pipeline.ingest import Inputs
    from autograde.workflow.cluster import ClusterJobs

__all__ = ["format_plan", "plan_json", "plan_run"]


def plan_run(config: Config, config_path: str | Path | None = None, measure: int = 0,
             graders: list[str] | None = None, inputs: Inputs | None = None,
             load_models: bool = False) -> tuple[list[GraderPlan], str]:
    """The plan of every model stage of every feature (with ``graders``: only those graders' grading); returns the
    plans and where the pool came from."""
    from autograde.workflow.estimate import pool_and_queries
    from autograde.workflow.features import model_stages

    if graders:
        for name in graders:
            config.grader(name)  # an unknown name is an error naming the graders
    pool, queries, source = pool_and_queries(config, inputs, config_path)
    options = PlanOptions(measure, load_models, tuple(graders or ()))
    plans = [p for stage in model_stages() for p in stage.plan(config, pool, queries, options)]
    return plans, source


def _duration(seconds: float | None) -> str:
    from autograde.core.log import format_duration

    return "-" if seconds is None else format_duration(seconds)


def format_plan(plans: list[GraderPlan], source: str, cluster: ClusterJobs | None = None) -> str:
    """The plan as a table per grader, with its shards, the time and the cost; one line on how tokens are counted;
    with ``cluster``, the cluster jobs of the run under a SLURM profile's grouping."""
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
            start = (f"a job's start-up {m.startup_seconds:.1f} s (a fresh process: imports, config, model)"
                     if m.startup_seconds is not None else f"a {m.load_seconds:.1f} s model load")
            lines.append(f"- {p.name}: measured here: {m.prompts} prompt(s) in {m.seconds:.2f} s "
                         f"({m.tokens_per_s:,.0f} tokens/s), {start}; per job: " +
                         ", ".join(f"{s.shard} {s.to_compute:,} prompts {_duration(s.seconds)}" for s in p.shards))
        elif p.shards:
            lines.append(f"- {p.name}: per shard: " + ", ".join(f"{s.shard} {s.to_compute:,} prompts"
                                                                 for s in p.shards))
    if any(p.counted_by == "approximation" for p in plans):
        lines.append("- tokens marked approx.: an endpoint counts with its own tokenizer; 1 token per 4 characters")
    if any(p.output_at_most for p in plans):
        lines.append("- output tokens marked <=: generate mode's token limit (the answers may be shorter; --measure "
                     "counts them)")
    jobs = sum(sum(1 for s in p.shards if s.to_compute) if p.shards else 1 for p in plans if p.to_compute)
    lines.append(f"- model jobs: {jobs} (one per shard with prompts to compute; the analysis after them is a fixed "
                 "set of jobs over all queries, docs/scale.md)")
    if cluster is not None:
        from autograde.workflow.cluster import format_cluster_jobs

        lines.append(format_cluster_jobs(cluster))
    if any(p.seconds is not None for p in plans):
        total = sum(p.seconds or 0.0 for p in plans)
        gpu_backends = sorted(b.name for b in BACKENDS.values() if b.gpu)
        gpu = sum(p.seconds or 0.0 for p in plans if p.backend in gpu_backends)
        lines.append(f"- time: extrapolated from the measurement, each job with its start-up, one after another on "
                     f"this node: {_duration(total)} in total; of it {gpu / 3600:.2f} hours in jobs of a GPU backend "
                     f"({', '.join(gpu_backends)}: GPU-hours when measured on the cluster's GPU node)")
    else:
        lines.append("- time: --measure N times N prompts per grader on this node and extrapolates per shard")
    return "\n".join(lines) + "\n"


def plan_json(plans: list[GraderPlan], source: str, cluster: ClusterJobs | None = None) -> str:
    out: dict[str, object] = {"pool": source, "graders": [asdict(p) for p in plans]}
    if cluster is not None:
        out["cluster"] = {**asdict(cluster), "cluster_jobs": cluster.cluster_jobs}
    return json.dumps(out, indent=2) + "\n"
