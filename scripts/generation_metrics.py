"""Rule generation_metrics: EM / Acc / StringEM / CoverEM / F1 / ROUGE of predictions vs references."""
from autograde.stages import run_generation_metrics
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_generation_metrics(config, snakemake.input.data, snakemake.output.json, snakemake.output.md)  # noqa: F821
