"""Rule site: the static review site under results/site."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.config.reports import ReportsConfig
    from autograde.reports.stages import run_site

    run_site(ReportsConfig.model_validate(sm.params.reports), config.results_dir, sm.output[0], list(sm.params.graders),
             sm.params.official, int(sm.params.relevant_level), config.grading.cache_dir)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
