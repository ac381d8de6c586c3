"""Rule retrieval_metrics: evaluation-server retrieval metrics under the human qrels."""
from autograde.stages import run_retrieval_metrics
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_retrieval_metrics(config, snakemake.input.qrels, snakemake.input.rankings,  # noqa: F821
                      snakemake.output.json, snakemake.output.md)  # noqa: F821
