"""Rule retrieval_metrics: evaluation-server retrieval metrics under the human qrels."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_retrieval_metrics

    run_retrieval_metrics(config, sm.input.qrels, sm.input.rankings, sm.output.json, sm.output.md)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
