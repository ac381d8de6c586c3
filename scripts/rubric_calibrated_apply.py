"""Rule rubric_apply_calibrated_qrels: label this experiment's sources with a model folder fitted elsewhere."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.calibrated.stages import run_apply
    from autograde.config.rubric import CalibratedQrelsConfig

    cfg = CalibratedQrelsConfig.model_validate(sm.params.calibrated)
    o = sm.output
    run_apply(cfg.model, cfg.sources, o.qrels, o.report, o.md, o.table, cfg.output, cfg.judgments or None)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
