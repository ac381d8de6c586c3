"""Rule rubric_qrels: Rubric-Qrels (max or count mode) from the grades."""
from autograde.stages import run_qrels
from autograde.workflow import script_setup

script_setup(snakemake)  # noqa: F821
mode, _, tau = snakemake.wildcards.variant.partition("-")  # noqa: F821
run_qrels(snakemake.input.grades, mode, int(tau), snakemake.output.qrels)  # noqa: F821
