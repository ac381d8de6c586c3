"""Rule rubric_calibrate_qrels: calibrated relevance labels from several graders, cross-validated by query."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.rubric.config import CalibratedQrelsConfig
    from autograde.rubric.relevance import run_calibrate_qrels

    o = sm.output
    run_calibrate_qrels(CalibratedQrelsConfig.model_validate(sm.params.calibrated), o.qrels, o.report, o.md, o.table)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
