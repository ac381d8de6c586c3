"""Rules leaderboards / leaderboards_human: one TSV per measure, best system first."""
from autograde.stages import run_leaderboards
from autograde.workflow import script_setup

script_setup(snakemake)  # noqa: F821
run_leaderboards(snakemake.input.evaluation, list(snakemake.params.measures), list(snakemake.output))  # noqa: F821
