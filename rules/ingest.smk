rule ingest:
    input:
        unpack(ingest_inputs),
    output:
        queries=LAYOUT.ingest("queries"),
        rankings=LAYOUT.ingest("rankings"),
        answer_passages=LAYOUT.ingest("answer_passages"),
        judgments=LAYOUT.ingest("judgments"),
    log:
        "logs/ingest.log",
    conda:
        "../envs/analysis.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        answers=CTX.config.answers.model_dump(),  # config sections as params: editing them reruns the rule
    script:
        "../scripts/ingest.py"


rule pool:
    input:
        rankings=rules.ingest.output.rankings,
        judgments=rules.ingest.output.judgments,
        answer_passages=rules.ingest.output.answer_passages,
        queries=rules.ingest.output.queries,
        corpus=corpus_files,
    output:
        pool=LAYOUT.pool,
        shards=scatter.grade(LAYOUT.pool_shard("{scatteritem}")),
    log:
        "logs/pool.log",
    conda:
        "../envs/analysis.yaml"
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        pool=CTX.config.pool.model_dump(),
    script:
        "../scripts/pool.py"
