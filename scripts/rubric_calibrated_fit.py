"""Rule rubric_fit_calibrated_qrels: a calibrated-qrels model folder fitted on every judged passage."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.rubric.config import CalibratedQrelsConfig
    from autograde.rubric.qrels_stage import run_fit

    run_fit(CalibratedQrelsConfig.model_validate(sm.params.calibrated), sm.output.model)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
