"""Rule correlation: Spearman and Kendall tau-b of every leaderboard against the official one."""
from autograde.stages import run_correlation
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_correlation(config, list(snakemake.input.leaderboards), snakemake.output[0])  # noqa: F821
