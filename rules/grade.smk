rule grade:
    input:
        pool=R + "/pool/shards/{scatteritem}.parquet",
        queries=rules.ingest.output.queries,
        bank=bank_of_grader,
    output:
        grades=R + "/grades/{grader}/shards/{scatteritem}.parquet",
        stats=R + "/grades/{grader}/shards/{scatteritem}.stats.json",
        failures=R + "/grades/{grader}/shards/{scatteritem}.failures.jsonl",
    params:
        digest=shard_digest,
    threads: 2
    resources:
        gpu=grade_resource("gpu"),
        mem_mb=grade_resource("mem_mb"),
        runtime=grade_resource("runtime"),
    log:
        "logs/grade/{grader}/{scatteritem}.log",
    benchmark:
        "benchmarks/grade/{grader}/{scatteritem}.tsv"
    script:
        "../scripts/grade.py"


rule merge_grades:
    input:
        grades=gather.grade(R + "/grades/{{grader}}/shards/{scatteritem}.parquet"),
        stats=gather.grade(R + "/grades/{{grader}}/shards/{scatteritem}.stats.json"),
        failures=gather.grade(R + "/grades/{{grader}}/shards/{scatteritem}.failures.jsonl"),
    output:
        grades=R + "/grades/{grader}.parquet",
        stats=R + "/grades/{grader}.stats.json",
        failures=R + "/grades/{grader}.failures.jsonl",
    log:
        "logs/merge_grades/{grader}.log",
    group:
        "analysis"
    script:
        "../scripts/merge_grades.py"
