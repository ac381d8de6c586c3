"""Rule nugget_leaderboards: one TSV per nugget score, best run first (+ permutation test vs nuggets.baseline)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_nugget_leaderboards

    run_nugget_leaderboards(config, sm.input.evaluation, list(sm.output))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
