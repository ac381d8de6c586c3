"""Rule rubric_apply_calibrated_qrels: label this experiment's sources with a model folder fitted elsewhere."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.rubric.config import CalibratedQrelsConfig
    from autograde.rubric.qrels_stage import run_apply

    cfg = CalibratedQrelsConfig.model_validate(sm.params.calibrated)
    o = sm.output
    run_apply(cfg.model, cfg.sources, o.qrels, o.report, o.md, o.table, cfg.output, cfg.judgments or None)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
