"""Rule rubric_fit: fit LLM-RUBRIC's calibration network on every annotation (hyperparameter selection if enabled)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.calibrated.registry import network_kind
    from autograde.config.rubric import RubricConfig
    from autograde.rubric.stages import run_fit

    run_fit(RubricConfig.model_validate(sm.params.rubric), sm.output.model, sm.output.report, network_kind())


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
