rule rubric_qrels:
    input:
        grades=f"{R}/grades/{{grader}}.parquet",
    output:
        qrels=f"{R}/qrels/{{grader}}/{{variant}}.qrels",
    log:
        "logs/rubric_qrels/{grader}/{variant}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/rubric_qrels.py"


rule evaluate:
    input:
        qrels=f"{R}/qrels/{{grader}}/{{variant}}.qrels",
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=f"{R}/eval/{{grader}}/{{variant}}.parquet",
    params:
        level=qrels_level_of,
        evaluation=CTX.config.evaluation.model_dump(),
    log:
        "logs/evaluate/{grader}/{variant}.log",
    benchmark:
        "benchmarks/evaluate/{grader}/{variant}.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/evaluate.py"


rule evaluate_human:
    input:
        qrels=human_qrels,
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=f"{R}/eval/human.parquet",
    params:
        level=CTX.config.evaluation.human_relevance_level,
        evaluation=CTX.config.evaluation.model_dump(),
    log:
        "logs/evaluate/human.log",
    benchmark:
        "benchmarks/evaluate/human.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/evaluate.py"


rule leaderboards:
    input:
        evaluation=f"{R}/eval/{{grader}}/{{variant}}.parquet",
    output:
        expand(f"{R}/leaderboards/{{{{grader}}}}/{{{{variant}}}}/{{measure}}.tsv", measure=CTX.measures()),
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    log:
        "logs/leaderboards/{grader}/{variant}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/leaderboards.py"


rule leaderboards_human:
    input:
        evaluation=f"{R}/eval/human.parquet",
    output:
        expand(f"{R}/leaderboards/human/{{measure}}.tsv", measure=CTX.measures()),
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    log:
        "logs/leaderboards/human.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/leaderboards.py"


rule correlation:
    input:
        leaderboards=CTX.leaderboard_files(),
        official=CTX.config.data.official_leaderboard or [],
    params:
        correlation=CTX.config.correlation.model_dump(),
    output:
        f"{R}/correlation.tsv",
    log:
        "logs/correlation.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/correlation.py"


rule cover:
    input:
        grades=f"{R}/grades/{{grader}}.parquet",
        rankings=rules.ingest.output.rankings,
    output:
        per_query=f"{R}/cover/{{grader}}/cover-{{tau}}.parquet",
        cover=f"{R}/leaderboards/{{grader}}/cover-{{tau}}/cover.tsv",
        ncover=f"{R}/leaderboards/{{grader}}/cover-{{tau}}/ncover.tsv",
    params:
        cover=CTX.config.cover.model_dump(),
    wildcard_constraints:
        tau=r"\d+",
    log:
        "logs/cover/{grader}/{tau}.log",
    benchmark:
        "benchmarks/cover/{grader}/{tau}.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/cover.py"
