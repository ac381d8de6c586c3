rule grade:
    input:
        pool=LAYOUT.pool_shard("{scatteritem}"),
        queries=rules.ingest.output.queries,
        bank=bank_of_grader,
    output:
        grades=LAYOUT.grade_shard("{grader}", "{scatteritem}"),
        stats=LAYOUT.grade_shard("{grader}", "{scatteritem}", ".stats.json"),
        failures=LAYOUT.grade_shard("{grader}", "{scatteritem}", ".failures.jsonl"),
    log:
        "logs/grade/{grader}/{scatteritem}.log",
    benchmark:
        "logs/benchmarks/grade/{grader}/{scatteritem}.tsv"
    conda:
        GRADE_JOBS.conda_env
    threads: 2
    resources:
        **GRADE_JOBS.resources(),
    params:
        digest=get_shard_digest,
    script:
        "../scripts/grade.py"


rule merge_grades:
    input:
        grades=gather.grade(LAYOUT.grade_shard("{{grader}}", "{scatteritem}")),
        stats=gather.grade(
            LAYOUT.grade_shard("{{grader}}", "{scatteritem}", ".stats.json")
        ),
        failures=gather.grade(
            LAYOUT.grade_shard("{{grader}}", "{scatteritem}", ".failures.jsonl")
        ),
    output:
        grades=LAYOUT.grades("{grader}"),
        stats=LAYOUT.grades("{grader}", ".stats.json"),
        failures=LAYOUT.grades("{grader}", ".failures.jsonl"),
    log:
        "logs/merge_grades/{grader}.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        digests=get_shard_digests,
    script:
        "../scripts/merge_grades.py"
