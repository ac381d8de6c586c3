rule rubric_qrels:
    input:
        grades=LAYOUT.grades("{grader}"),
    output:
        qrels=LAYOUT.qrels("{grader}", "{variant}"),
    log:
        "logs/rubric_qrels/{grader}/{variant}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        variant=get_qrels_variant,
    script:
        "../scripts/rubric_qrels.py"


rule evaluate:
    input:
        qrels=LAYOUT.qrels("{grader}", "{variant}"),
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=LAYOUT.evaluation("{grader}", "{variant}"),
        stats=LAYOUT.evaluation("{grader}", "{variant}", ".stats.json"),
    log:
        "logs/evaluate/{grader}/{variant}.log",
    benchmark:
        "logs/benchmarks/evaluate/{grader}/{variant}.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        level=get_qrels_level,
        evaluation=CTX.config.evaluation.model_dump(),
    script:
        "../scripts/evaluate.py"


rule evaluate_human:
    input:
        qrels=human_qrels,
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=LAYOUT.evaluation("human"),
        stats=LAYOUT.evaluation("human", None, ".stats.json"),
    log:
        "logs/evaluate/human.log",
    benchmark:
        "logs/benchmarks/evaluate/human.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        level=CTX.config.evaluation.relevance_level,
        evaluation=CTX.config.evaluation.model_dump(),
    script:
        "../scripts/evaluate.py"


rule leaderboards:
    input:
        evaluation=LAYOUT.evaluation("{grader}", "{variant}"),
    output:
        expand(
            LAYOUT.leaderboard("{{grader}}", "{{variant}}", "{measure}"),
            measure=CTX.measures(),
        ),
    log:
        "logs/leaderboards/{grader}/{variant}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    script:
        "../scripts/leaderboards.py"


rule leaderboards_human:
    input:
        evaluation=LAYOUT.evaluation("human"),
    output:
        expand(LAYOUT.leaderboard("human", None, "{measure}"), measure=CTX.measures()),
    log:
        "logs/leaderboards/human.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    script:
        "../scripts/leaderboards.py"


rule correlation:
    input:
        leaderboards=CTX.leaderboard_files(),
        official=CTX.config.data.official_leaderboard or [],
    output:
        LAYOUT.correlation,
    log:
        "logs/correlation.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        correlation=CTX.config.correlation.model_dump(),
        leaderboards=get_leaderboard_table,
    script:
        "../scripts/correlation.py"


rule cover:
    input:
        grades=LAYOUT.grades("{grader}"),
        rankings=rules.ingest.output.rankings,
    output:
        per_query=LAYOUT.cover("{grader}", "{tau}"),
        stats=LAYOUT.cover("{grader}", "{tau}", ".stats.json"),
        cover=LAYOUT.leaderboard("{grader}", "cover-{tau}", "cover"),
        ncover=LAYOUT.leaderboard("{grader}", "cover-{tau}", "ncover"),
    log:
        "logs/cover/{grader}/{tau}.log",
    benchmark:
        "logs/benchmarks/cover/{grader}/{tau}.tsv"
    wildcard_constraints:
        tau=r"\d+",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        cover=CTX.config.cover.model_dump(),
    script:
        "../scripts/cover.py"
