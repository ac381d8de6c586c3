# autograde: LLM autograding of retrieval / RAG systems (Rubric-Grading Workbench, EXAM++, LLM-RUBRIC).
# This file is a table of contents; logic lives in src/autograde/, rules in rules/*.smk.
#
# The experiment is ONE complete config file, never merged with another: by default the bundled example
# (config/experiments/example.yaml); choose another with `--config experiment=PATH` (or $AUTOGRADE_EXPERIMENT),
# or give a complete config with `--configfile PATH`. There is deliberately no `configfile:` directive here:
# Snakemake would deep-merge it into every other experiment.

from snakemake.utils import min_version

min_version("9.0")


include: "rules/common.smk"


wildcard_constraints:
    grader="|".join(CTX.qrels_sources()) or "NO_GRADER",
    scatteritem=r"\d+-of-\d+",
    variant=VARIANT_PATTERN,
    measure=r"[A-Za-z0-9_.]+",


scattergather:
    grade=CTX.config.grading.shards,


# every feature's rules (autograde.workflow.features: the one list; a feature adds its file there, not here)
for rules_file in CTX.rule_files():

    include: rules_file


rule all:
    default_target: True
    input:
        CTX.final_outputs(),


onsuccess:
    print_outputs(CTX)
