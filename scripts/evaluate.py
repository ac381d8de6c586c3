"""Rules evaluate / evaluate_human: trec_eval measures of every system (pytrec-eval-terrier)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_evaluate

    run_evaluate(config, sm.input.qrels, sm.input.rankings, int(sm.params.level), sm.output.evaluation,
                 sm.output.stats)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
