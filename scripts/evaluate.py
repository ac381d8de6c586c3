"""Rules evaluate / evaluate_human: trec_eval measures of every system (pytrec-eval-terrier)."""
from autograde.stages import run_evaluate
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_evaluate(config, snakemake.input.qrels, snakemake.input.rankings, int(snakemake.params.level),  # noqa: F821
             snakemake.output.evaluation)  # noqa: F821
