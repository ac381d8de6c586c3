# Judge audit (the audit: config section, docs/audit.md): meta_evaluate compares every grader's labels and
# leaderboards with the human qrels (label and system level, per topic, top-k); audit_robustness grades perturbed
# copies of a seeded sample of pooled passages with one grader through its grade cache (a model job).
# Logic: autograde.audit (stages in autograde.audit.stages, these rules' input functions in autograde.audit.workflow).
from autograde.audit.workflow import AuditRules

AUDIT_RULES = AuditRules(CTX)


rule meta_evaluate:
    input:
        unpack(AUDIT_RULES.meta_inputs),
    output:
        labels=LAYOUT.audit("meta/labels.tsv"),
        systems=LAYOUT.audit("meta/systems.tsv"),
        per_topic=LAYOUT.audit("meta/per-topic.tsv"),
        confusion=LAYOUT.audit("meta/confusion.tsv"),
        report=LAYOUT.audit("meta/meta-evaluation.md"),
    log:
        "logs/audit/meta_evaluate.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        audit=AUDIT_RULES.params(),
        leaderboards=AUDIT_RULES.sources,
    script:
        "../scripts/audit_meta.py"


rule audit_robustness:
    input:
        unpack(AUDIT_RULES.robustness_inputs),
    output:
        pairs=LAYOUT.audit_grader("{grader}", "pairs.parquet"),
        summary=LAYOUT.audit_grader("{grader}", "summary.tsv"),
        leaderboard=LAYOUT.audit_grader("{grader}", "leaderboard.tsv"),
        stats=LAYOUT.audit_grader("{grader}", "stats.json"),
        report=LAYOUT.audit_grader("{grader}", "robustness.md"),
    log:
        "logs/audit/robustness/{grader}.log",
    benchmark:
        "logs/benchmarks/audit/robustness/{grader}.tsv"
    conda:
        AUDIT_RULES.robustness_jobs.conda_env
    threads: 2
    resources:
        **AUDIT_RULES.robustness_jobs.resources(),
    params:
        audit=AUDIT_RULES.params(),
    script:
        "../scripts/audit_robustness.py"
