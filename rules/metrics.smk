rule retrieval_metrics:
    input:
        qrels=human_qrels,
        rankings=rules.ingest.output.rankings,
    output:
        json=LAYOUT.metrics("retrieval"),
        md=LAYOUT.metrics("retrieval", ".md"),
    log:
        "logs/metrics/retrieval.log",
    benchmark:
        "logs/benchmarks/metrics/retrieval.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        retrieval=CTX.config.metrics.retrieval.model_dump(),
    script:
        "../scripts/retrieval_metrics.py"


rule generation_metrics:
    input:
        data=CTX.config.data.generation or [],
    output:
        json=LAYOUT.metrics("generation"),
        md=LAYOUT.metrics("generation", ".md"),
    log:
        "logs/metrics/generation.log",
    benchmark:
        "logs/benchmarks/metrics/generation.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        generation=CTX.config.metrics.generation.model_dump(),
    script:
        "../scripts/generation_metrics.py"
