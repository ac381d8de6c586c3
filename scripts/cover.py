"""Rule cover: Rubric-Cover / EXAM-Cover leaderboards (cover and n-cover at top-k, threshold tau)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_cover

    i, o = sm.input, sm.output
    run_cover(config, i.grades, i.rankings, int(sm.wildcards.tau), o.per_query, o.cover, o.ncover, o.stats)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
