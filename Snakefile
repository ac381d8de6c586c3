# autograde: LLM autograding of retrieval / RAG systems (Rubric-Grading Workbench, EXAM++, LLM-RUBRIC).
# This file is a table of contents; logic lives in src/autograde/, rules in rules/*.smk.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "rules/common.smk"


scattergather:
    grade=CTX.config.grading.shards,


include: "rules/ingest.smk"
include: "rules/grade.smk"
include: "rules/evaluate.smk"
include: "rules/metrics.smk"


rule all:
    input:
        CTX.final_outputs(),
    default_target: True
