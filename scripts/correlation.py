"""Rule correlation: Spearman and Kendall tau-b of every leaderboard against the official one."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_correlation

    run_correlation(config, list(sm.params.leaderboards), sm.output[0])


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
