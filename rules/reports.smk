# Phase 3 reports per grader (after merge_grades), the correlation report and the static review site.
# Logic: autograde.reports (stages in autograde.reports.stages, these rules' input functions in
# autograde.reports.workflow); params carry every setting the stages use, so a changed setting reruns exactly
# the affected reports. The outputs of `reports` are autograde.reports.stages.GRADER_REPORT_FILES.
from autograde.reports.workflow import ReportRules

REPORT_RULES = ReportRules(CTX)


rule reports:
    input:
        unpack(REPORT_RULES.grader_inputs),
    output:
        bank_items=LAYOUT.report("{grader}", "items.parquet"),
        passages=LAYOUT.report("{grader}", "passages.parquet"),
        verify=LAYOUT.report("{grader}", "verify.parquet"),
        missing=LAYOUT.report("{grader}", "missing.tsv"),
        spurious=LAYOUT.report("{grader}", "spurious.tsv"),
        impact=LAYOUT.report("{grader}", "impact.tsv"),
        agreement=LAYOUT.report("{grader}", "agreement.tsv"),
        agreement_graded=LAYOUT.report("{grader}", "agreement-graded.tsv"),
        agreement_per_query=LAYOUT.report("{grader}", "agreement-per-query.tsv"),
        agreement_md=LAYOUT.report("{grader}", "agreement.md"),
        agreement_tex=LAYOUT.report("{grader}", "agreement.tex"),
        summary=LAYOUT.report("{grader}", "summary.json"),
    log:
        "logs/reports/{grader}.log",
    benchmark:
        "logs/benchmarks/reports/{grader}.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        spec=REPORT_RULES.spec,
        reports=REPORT_RULES.reports_params(),
    script:
        "../scripts/report_grader.py"


rule report_correlation:
    input:
        per_query=REPORT_RULES.correlation_inputs,
        official=CTX.config.data.official_leaderboard or [],
    output:
        table=LAYOUT.reports("correlation.tsv"),
        plots=REPORT_RULES.plot_outputs(),
    log:
        "logs/reports/correlation.log",
    benchmark:
        "logs/benchmarks/reports/correlation.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        sources=REPORT_RULES.sources,
        reports=REPORT_RULES.reports_params(),
    script:
        "../scripts/report_correlation.py"


rule site:
    input:
        unpack(REPORT_RULES.site_inputs),
    output:
        directory(LAYOUT.site),
    log:
        "logs/reports/site.log",
    benchmark:
        "logs/benchmarks/reports/site.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        graders=CTX.grader_names(),
        official=CTX.config.data.official_leaderboard,
        relevant_level=REPORT_RULES.relevant_level(),
        reports=REPORT_RULES.reports_params(),
    script:
        "../scripts/report_site.py"
