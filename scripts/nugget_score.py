"""Rule score_nuggets: one shard's labels (by the assessor's thresholds) and per-answer All / Vital / Weighted."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_score_shard

    i, o = sm.input, sm.output
    run_score_shard(config, sm.wildcards.assessor, i.grades, i.answers, i.importance, i.queries, o.assignments,
                    o.scores, shard=sm.wildcards.scatteritem)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
