"""Rule calibrated_qrels: calibrated relevance labels from several graders (cross-validated by query, or applied
from a model folder fitted elsewhere)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.calibrated.stages import run_calibrated_qrels

    o = sm.output
    run_calibrated_qrels(config.calibrated_qrels, o.qrels, o.report, o.md, o.table)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
