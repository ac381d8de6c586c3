"""The test-bank generation feature (``bank_generation:``): its record of hooks, and the plan of its model jobs.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.errors import AutogradeError
from autograde.core.feature import CheckContext, Feature, ModelStage
from autograde.grading.registry import backend

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.pipeline.planning import GraderPlan, PlanOptions


def plan_banks(config: Config, pool: pd.DataFrame, queries: dict[str, str], options: PlanOptions) -> list[GraderPlan]:
    """One first-round prompt per query of each generated bank, dealt into the grading shards as the workflow does;
    cached answers are not asked again. Output tokens are at most ``decoding.max_new_tokens`` per prompt; repair
    prompts are not counted (they run only for an answer that does not validate: at most ``repair_attempts`` more per
    query). Counted, not timed."""
    from autograde.banks.cache import GenerationCache
    from autograde.banks.generate import make_generator, query_prompts
    from autograde.grading.base import approximate_tokens
    from autograde.grading.cache import cache_key
    from autograde.pipeline.planning import GraderPlan, ShardPlan, not_built_here, plan_cost
    from autograde.pipeline.shards import shard_assignment

    if options.graders:
        return []
    plans = []
    n_shards = config.grading.shards
    for name, cfg in config.bank_generation.items():
        plan = GraderPlan("bank generation", name, cfg.backend, len(queries), None, len(queries))
        plans.append(plan)
        info = backend(cfg.backend)
        plan.note = not_built_here(info.environment, info.local_model, options)
        if plan.note:
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
            plan.cost, plan.currency = plan_cost(cfg.options, plan.input_tokens, plan.output_tokens)
        finally:
            gen.close()
    return plans


def _targets(config: Config) -> list[str]:
    from autograde.banks.stages import generated_bank_targets

    return generated_bank_targets(config)


def _bank_shard_digest(config: Config, grader: str, scatteritem: str, queries: dict[str, str]) -> str | None:
    from autograde.banks.stages import graded_generated_digest
    from autograde.config.banks import is_graded_as_generated

    if not is_graded_as_generated(config, config.grader(grader).bank):
        return None
    return graded_generated_digest(config, grader, scatteritem, queries)


def _check(ctx: CheckContext) -> None:
    from autograde.banks.checks import check_bank_generation

    check_bank_generation(ctx.config, ctx.queries or None, ctx.problems, ctx.src)


FEATURE = Feature(
    "banks", section="bank_generation", rules=("banks.smk",), cli="autograde.cli.banks", targets=_targets,
    model_stages=(ModelStage("generate_bank", "bank generation", plan_banks),), check_config=_check,
    bank_shard_digest=_bank_shard_digest)
"""Phase 1: test banks an LLM drafts (docs/banks.md)."""
