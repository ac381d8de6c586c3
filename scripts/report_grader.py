"""Rule reports: one grader's Phase 3 reports (verify, grid labels, missing, spurious, impact, agreement)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.config.reports import ReportsConfig
    from autograde.reports.stages import GraderReportSpec, run_grader_reports

    spec = GraderReportSpec.from_dict(sm.params.spec)
    i = sm.input
    evaluations = dict(zip(spec.variants, i.evaluations, strict=True)) if len(i.evaluations) else {}
    run_grader_reports(spec, ReportsConfig.model_validate(sm.params.reports), i.grades, i.judgments, i.rankings,
                       i.queries, evaluations, dict(sm.output.items()), config.grading.cache_dir)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
