"""Rule rubric_qrels: Rubric-Qrels (max or count mode) from the grades."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_qrels

    variant = sm.params.variant
    run_qrels(sm.input.grades, variant["mode"], int(variant["threshold"]), sm.output.qrels)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
