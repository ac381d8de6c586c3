"""Rule rubric_fit_calibrated_qrels: a calibrated-qrels model folder fitted on every judged passage."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.calibrated.stages import run_fit

    run_fit(config.calibrated_qrels, sm.output.model)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
