rule grade:
    input:
        pool=f"{R}/pool/shards/{{scatteritem}}.parquet",
        queries=rules.ingest.output.queries,
        bank=bank_of_grader,
    output:
        grades=f"{R}/grades/{{grader}}/shards/{{scatteritem}}.parquet",
        stats=f"{R}/grades/{{grader}}/shards/{{scatteritem}}.stats.json",
        failures=f"{R}/grades/{{grader}}/shards/{{scatteritem}}.failures.jsonl",
    params:
        digest=shard_digest,
    threads: 2
    resources:
        gpu=grade_resource("gpu"),
        gpu_model=grade_resource("gpu_model"),
        mem_mb=grade_resource("mem_mb"),
        runtime=grade_resource("runtime"),
    conda:
        grade_resource("conda_env")
    log:
        "logs/grade/{grader}/{scatteritem}.log",
    benchmark:
        "benchmarks/grade/{grader}/{scatteritem}.tsv"
    script:
        "../scripts/grade.py"


rule merge_grades:
    input:
        grades=gather.grade(f"{R}/grades/{{{{grader}}}}/shards/{{scatteritem}}.parquet"),
        stats=gather.grade(f"{R}/grades/{{{{grader}}}}/shards/{{scatteritem}}.stats.json"),
        failures=gather.grade(f"{R}/grades/{{{{grader}}}}/shards/{{scatteritem}}.failures.jsonl"),
    output:
        grades=f"{R}/grades/{{grader}}.parquet",
        stats=f"{R}/grades/{{grader}}.stats.json",
        failures=f"{R}/grades/{{grader}}.failures.jsonl",
    params:
        digests=shard_digests,
    log:
        "logs/merge_grades/{grader}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/merge_grades.py"
