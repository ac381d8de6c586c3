"""Rules leaderboards / leaderboards_human: one TSV per measure, best system first (+ significance vs baseline)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_leaderboards

    run_leaderboards(sm.input.evaluation, list(sm.params.measures), list(sm.output), config.metrics.significance)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
