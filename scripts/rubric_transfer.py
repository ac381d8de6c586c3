"""Rule rubric_transfer: train on every annotation, evaluate on rubric.test (Table 1 of the train/test protocol)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.config.rubric import RubricConfig
    from autograde.rubric.stages import run_transfer

    run_transfer(RubricConfig.model_validate(sm.params.rubric), sm.output.report, sm.output.md, sm.output.tex)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
