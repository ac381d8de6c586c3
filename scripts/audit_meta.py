"""Rule meta_evaluate: every grader's agreement with the human qrels (label and system level) from the results."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.audit.stages import run_meta_evaluation

    run_meta_evaluation(config, config.results_dir, dict(sm.output.items()))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
