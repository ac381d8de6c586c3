"""Rule human_sample_estimates: estimates with intervals from the human sample, per prediction and measure."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.ppi.stages import run_estimates

    run_estimates(config, sm.input.pool, sm.input.rankings, dict(sm.params.outputs))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
