# Reproduction of the papers' tables (`make reproduce`, docs/reproduce.md), independent of the experiment: the
# plan is config/reproduce/reproduce.yaml ($AUTOGRADE_REPRODUCE names another), the paper values are data in
# config/reproduce/papers/*.yaml. Logic: autograde.reproduce (stage functions in autograde.reproduce.stages).
# A table's inputs are the files of its plan entry that exist (an absent one makes the table say "input
# missing"); its settings travel as a param, so editing one table reruns exactly that table and the index.
# A broken plan fails only when the reproduction is asked for (the input functions raise it then).
from autograde.reproduce.workflow import ReproductionContext

REPRO = ReproductionContext.load()


rule reproduce_table:
    input:
        REPRO.inputs_of,
    output:
        measured=REPRO.table_output(),
    log:
        "logs/reproduce/{table}.log",
    benchmark:
        "logs/benchmarks/reproduce/{table}.tsv"
    wildcard_constraints:
        table="|".join(REPRO.table_names()) or "NO_TABLE",
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        plan=REPRO.source,
        settings=REPRO.params_of,
    script:
        "../scripts/reproduce_table.py"


rule reproduce_index:
    input:
        unpack(REPRO.index_inputs),
    output:
        **REPRO.index_files(),
    log:
        "logs/reproduce/index.log",
    conda:
        "../envs/hf.yaml"
    params:
        plan=REPRO.source,
    script:
        "../scripts/reproduce_index.py"


rule reproduce:
    input:
        REPRO.targets,
