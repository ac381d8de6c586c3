# Nugget scores of the RAG answers (TREC RAG 2024 style; the nuggets: config section, docs/nuggets.md).
# nugget_answers: the whole answers; nugget_importance: each nugget's vital/okay (the bank's, else a model's, cached),
# sharded by query like the assignments, so a score shard depends on its own importance shard only;
# assign_nuggets: support / partial_support / not_support per (whole answer, nugget), sharded by query and cached
# like grading (or mapped from an existing grader's passage grades); score_nuggets: labels and per-answer scores
# of one shard; merge_nuggets: the assignment table (also as TREC RAG assignment JSONL) and the evaluation table;
# nugget_leaderboards: All / Vital / Weighted leaderboards with the permutation test. Logic: autograde.nuggets.
# Model jobs (importance, whole-answer assignment) and the answers table stay outside the `analysis` group; the
# mapped assignment (no model, after merge_grades) and the scoring steps join it.
from autograde.core.layout import Layout
from autograde.nuggets.workflow import NuggetRules


scattergather:
    assign_nuggets=(
        CTX.config.nuggets.shards or CTX.config.grading.shards
        if CTX.config.nuggets
        else 1
    ),


NUGGET_RULES = NuggetRules(CTX, scatter.assign_nuggets)
NUG = Layout.of(RESULTS)


rule nugget_answers:
    input:
        answers=CTX.answer_files(),
    output:
        answers=NUG.nugget_table("answers.parquet"),
    log:
        "logs/nuggets/answers.log",
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/nugget_answers.py"


rule nugget_importance:
    input:
        # ancient(): an edit of the bank reruns exactly the shards whose nuggets it touches (the digest in params)
        bank=ancient(NUGGET_RULES.bank_file()),
        queries=rules.ingest.output.queries,
    output:
        importance=NUG.nugget_table("importance/shards/{scatteritem}.parquet"),
        stats=NUG.nugget_table("importance/shards/{scatteritem}.stats.json"),
    log:
        "logs/nuggets/importance/{scatteritem}.log",
    conda:
        NUGGET_RULES.importance_jobs.conda_env
    threads: 2
    resources:
        **NUGGET_RULES.importance_jobs.resources(),
    params:
        digest=NUGGET_RULES.importance_digest,
    script:
        "../scripts/nugget_importance.py"


rule merge_importance:
    input:
        importance=gather.assign_nuggets(
            NUG.nugget_table("importance/shards/{scatteritem}.parquet")
        ),
        stats=gather.assign_nuggets(
            NUG.nugget_table("importance/shards/{scatteritem}.stats.json")
        ),
    output:
        importance=NUG.nugget_table("importance.parquet"),
        stats=NUG.nugget_table("importance.stats.json"),
    log:
        "logs/nuggets/merge_importance.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    script:
        "../scripts/nugget_merge_importance.py"


rule assign_nuggets:
    input:
        unpack(NUGGET_RULES.assign_inputs),
    output:
        grades=NUG.nugget_shard("{assessor}", "{scatteritem}", ".grades.parquet"),
        stats=NUG.nugget_shard("{assessor}", "{scatteritem}", ".stats.json"),
        failures=NUG.nugget_shard("{assessor}", "{scatteritem}", ".failures.jsonl"),
    log:
        "logs/assign_nuggets/{assessor}/{scatteritem}.log",
    benchmark:
        "logs/benchmarks/assign_nuggets/{assessor}/{scatteritem}.tsv"
    wildcard_constraints:
        assessor=NUGGET_RULES.assessor_constraint("whole_answer"),
    conda:
        NUGGET_RULES.assign_jobs.conda_env
    threads: 2
    resources:
        **NUGGET_RULES.assign_jobs.resources(),
    params:
        digest=NUGGET_RULES.assign_digest,
    script:
        "../scripts/nugget_assign.py"


use rule assign_nuggets as assign_nuggets_mapped with:
    wildcard_constraints:
        assessor=NUGGET_RULES.assessor_constraint("mapped"),
    group:
        "analysis"


rule score_nuggets:
    input:
        grades=NUG.nugget_shard("{assessor}", "{scatteritem}", ".grades.parquet"),
        # ancient(): answers and queries change only with a rerun of the assignment jobs, which reruns this one
        answers=ancient(NUG.nugget_table("answers.parquet")),
        importance=NUG.nugget_table("importance/shards/{scatteritem}.parquet"),
        queries=ancient(rules.ingest.output.queries),
    output:
        assignments=NUG.nugget_shard(
            "{assessor}", "{scatteritem}", ".assignments.parquet"
        ),
        scores=NUG.nugget_shard("{assessor}", "{scatteritem}", ".scores.parquet"),
    log:
        "logs/score_nuggets/{assessor}/{scatteritem}.log",
    wildcard_constraints:
        assessor=NUGGET_RULES.assessor_constraint(),
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        digest=NUGGET_RULES.score_digest,
    script:
        "../scripts/nugget_score.py"


rule merge_nuggets:
    input:
        assignments=gather.assign_nuggets(
            NUG.nugget_shard("{{assessor}}", "{scatteritem}", ".assignments.parquet")
        ),
        scores=gather.assign_nuggets(
            NUG.nugget_shard("{{assessor}}", "{scatteritem}", ".scores.parquet")
        ),
        stats=gather.assign_nuggets(
            NUG.nugget_shard("{{assessor}}", "{scatteritem}", ".stats.json")
        ),
        failures=gather.assign_nuggets(
            NUG.nugget_shard("{{assessor}}", "{scatteritem}", ".failures.jsonl")
        ),
        answers=NUG.nugget_table("answers.parquet"),
        importance=NUG.nugget_table("importance.parquet"),
        queries=rules.ingest.output.queries,
    output:
        assignments=NUG.nuggets("{assessor}", "assignments.parquet"),
        jsonl=NUG.nuggets("{assessor}", "assignments.jsonl"),
        evaluation=NUG.evaluation("{assessor}", "nuggets"),
        stats=NUG.nuggets("{assessor}", "stats.json"),
        failures=NUG.nuggets("{assessor}", "failures.jsonl"),
    log:
        "logs/merge_nuggets/{assessor}.log",
    wildcard_constraints:
        assessor=NUGGET_RULES.assessor_constraint(),
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        digests=NUGGET_RULES.assign_digests,
    script:
        "../scripts/nugget_merge.py"


rule nugget_leaderboards:
    input:
        evaluation=NUG.evaluation("{assessor}", "nuggets"),
    output:
        expand(
            NUG.leaderboard("{{assessor}}", "nuggets", "{measure}"),
            measure=NUGGET_RULES.measures(),
        ),
    log:
        "logs/nugget_leaderboards/{assessor}.log",
    wildcard_constraints:
        assessor=NUGGET_RULES.assessor_constraint(),
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        measures=NUGGET_RULES.measures(),
        significance=CTX.config.metrics.significance.model_dump(),
        baseline=CTX.config.nuggets.baseline if CTX.config.nuggets else None,
    script:
        "../scripts/nugget_leaderboards.py"
