"""Rule meta_evaluate: every grader's agreement with the human qrels (label and system level) from the results."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.audit.stages import run_meta_evaluation
    from autograde.core.layout import Leaderboard

    leaderboards = [Leaderboard.from_dict(d) for d in sm.params.leaderboards]
    run_meta_evaluation(config, leaderboards, config.results_dir, dict(sm.output.items()))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
