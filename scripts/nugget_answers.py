"""Rule nugget_answers: the whole RAG answers (one row per run and query), the unit nuggets are assigned to."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_answers

    run_answers(config, sm.output.answers)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
