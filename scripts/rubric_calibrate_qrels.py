"""Rule rubric_calibrate_qrels: calibrated relevance labels from several graders, cross-validated by query."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.rubric.config import CalibratedQrelsConfig
    from autograde.rubric.qrels_stage import run_cross_validate

    o = sm.output
    run_cross_validate(CalibratedQrelsConfig.model_validate(sm.params.calibrated), o.qrels, o.report, o.md, o.table)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
