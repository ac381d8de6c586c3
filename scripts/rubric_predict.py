"""Rule rubric_predict: every known judge's answer distributions for the texts of one LLM table."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.rubric.stages import run_predict

    run_predict(sm.input.model, sm.input.rubric, sm.input.llm, sm.output.predictions, None, sm.params.llm_format)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
