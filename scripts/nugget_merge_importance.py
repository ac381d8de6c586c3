"""Rule merge_importance: the importance shards joined into one table (for the merge and the site)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_merge_importance

    run_merge_importance(list(sm.input.importance), list(sm.input.stats), sm.output.importance, sm.output.stats)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
