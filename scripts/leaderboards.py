"""Rules leaderboards / leaderboards_human: one TSV per measure, best system first (+ significance vs baseline)."""
from autograde.stages import run_leaderboards
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_leaderboards(snakemake.input.evaluation, list(snakemake.params.measures), list(snakemake.output),  # noqa: F821
                 config.metrics.significance)
