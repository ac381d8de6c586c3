"""Rule report_correlation: Spearman, Kendall tau-b, tau-ap with bootstrap intervals; one scatter plot each."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.config.reports import ReportsConfig
    from autograde.reports.stages import run_report_correlation

    run_report_correlation(ReportsConfig.model_validate(sm.params.reports), list(sm.params.sources),
                           sm.input.official, sm.output.table, config.results_dir, config.grading.cache_dir)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
