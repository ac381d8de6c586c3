"""Rule rubric_evaluate: cross-validated network and baselines over the configured seeds (tables, diagram)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.config.rubric import RubricConfig
    from autograde.rubric.stages import run_evaluate

    o = sm.output
    run_evaluate(RubricConfig.model_validate(sm.params.rubric), o.report, o.md, o.predictions, o.svg, o.tex)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
