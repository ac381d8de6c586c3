"""Rule generation_metrics: EM / Acc / StringEM / CoverEM / F1 / ROUGE of predictions vs references."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_generation_metrics

    run_generation_metrics(config, sm.input.data, sm.output.json, sm.output.md)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
