rule rubric_qrels:
    input:
        grades=R + "/grades/{grader}.parquet",
    output:
        qrels=R + "/qrels/{grader}/{variant}.qrels",
    log:
        "logs/rubric_qrels/{grader}/{variant}.log",
    group:
        "analysis"
    script:
        "../scripts/rubric_qrels.py"


rule evaluate:
    input:
        qrels=R + "/qrels/{grader}/{variant}.qrels",
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=R + "/eval/{grader}/{variant}.parquet",
    params:
        level=qrels_level_of,
        evaluation=CTX.config.evaluation.model_dump(),
    log:
        "logs/evaluate/{grader}/{variant}.log",
    benchmark:
        "benchmarks/evaluate/{grader}/{variant}.tsv"
    group:
        "analysis"
    script:
        "../scripts/evaluate.py"


rule evaluate_human:
    input:
        qrels=human_qrels,
        rankings=rules.ingest.output.rankings,
    output:
        evaluation=R + "/eval/human.parquet",
    params:
        level=CTX.config.evaluation.human_relevance_level,
        evaluation=CTX.config.evaluation.model_dump(),
    log:
        "logs/evaluate/human.log",
    benchmark:
        "benchmarks/evaluate/human.tsv"
    group:
        "analysis"
    script:
        "../scripts/evaluate.py"


rule leaderboards:
    input:
        evaluation=R + "/eval/{grader}/{variant}.parquet",
    output:
        expand(R + "/leaderboards/{{grader}}/{{variant}}/{measure}.tsv", measure=CTX.measures()),
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    log:
        "logs/leaderboards/{grader}/{variant}.log",
    group:
        "analysis"
    script:
        "../scripts/leaderboards.py"


rule leaderboards_human:
    input:
        evaluation=R + "/eval/human.parquet",
    output:
        expand(R + "/leaderboards/human/{measure}.tsv", measure=CTX.measures()),
    params:
        measures=CTX.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
    log:
        "logs/leaderboards/human.log",
    group:
        "analysis"
    script:
        "../scripts/leaderboards.py"


rule correlation:
    input:
        leaderboards=CTX.leaderboard_files(),
        official=CTX.config.data.official_leaderboard or [],
    params:
        correlation=CTX.config.correlation.model_dump(),
    output:
        R + "/correlation.tsv",
    log:
        "logs/correlation.log",
    group:
        "analysis"
    script:
        "../scripts/correlation.py"
