"""Rule rubric_calibrate_qrels: calibrated relevance labels from several graders, cross-validated by query."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.calibrated.stages import run_cross_validate
    from autograde.config.rubric import CalibratedQrelsConfig

    o = sm.output
    run_cross_validate(CalibratedQrelsConfig.model_validate(sm.params.calibrated), o.qrels, o.report, o.md, o.table)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
