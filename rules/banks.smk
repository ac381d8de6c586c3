# Phase 1: test banks drafted by an LLM (bank_generation: in the experiment config), sharded by query like grading.
# generate_bank writes one shard's items (cache first, repair prompts, failures recorded); merge_bank joins them into
# results/banks/<bank>.jsonl.gz (workbench format, provenance in each line's info). Graders read it directly
# (grade_with: generated) or read the hand-edited copy made by `autograde bank init-edit` (grade_with: edited).
# Logic: autograde.banks (stages in autograde.banks.stages, these rules' functions in autograde.banks.workflow).
# No bank is read at parse time here: autograde.banks.stages says why there is no checkpoint.
from autograde.banks.workflow import BankRules


scattergather:
    generate_bank=CTX.config.grading.shards,


BANK_RULES = BankRules(CTX, scatter.generate_bank)


rule generate_bank:
    input:
        # ancient(): a queries-file edit reruns only the shards whose query texts changed (the digest decides)
        queries=ancient(BANK_RULES.queries_file()),
    output:
        bank=LAYOUT.bank_shard("{bank}", "{scatteritem}"),
        failures=LAYOUT.bank_shard("{bank}", "{scatteritem}", ".failures.jsonl"),
        stats=LAYOUT.bank_shard("{bank}", "{scatteritem}", ".stats.json"),
    log:
        "logs/generate_bank/{bank}/{scatteritem}.log",
    benchmark:
        "logs/benchmarks/generate_bank/{bank}/{scatteritem}.tsv"
    wildcard_constraints:
        bank=BANK_RULES.bank_constraint(),
    conda:
        BANK_RULES.jobs.conda_env
    threads: 2
    resources:
        **BANK_RULES.jobs.resources(),
    params:
        digest=BANK_RULES.digest,
    script:
        "../scripts/bank_generate.py"


rule merge_bank:
    input:
        banks=gather.generate_bank(LAYOUT.bank_shard("{{bank}}", "{scatteritem}")),
        failures=gather.generate_bank(
            LAYOUT.bank_shard("{{bank}}", "{scatteritem}", ".failures.jsonl")
        ),
        stats=gather.generate_bank(
            LAYOUT.bank_shard("{{bank}}", "{scatteritem}", ".stats.json")
        ),
    output:
        bank=LAYOUT.bank("{bank}"),
        failures=LAYOUT.bank("{bank}", ".failures.jsonl"),
        stats=LAYOUT.bank("{bank}", ".stats.json"),
    log:
        "logs/merge_bank/{bank}.log",
    wildcard_constraints:
        bank=BANK_RULES.bank_constraint(),
    conda:
        "../envs/analysis.yaml"
    params:
        digests=BANK_RULES.digests,
        allow_failures=BANK_RULES.allow_failures,
    script:
        "../scripts/bank_merge.py"
