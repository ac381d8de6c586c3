"""Rule nugget_importance: vital / okay per nugget of one shard (the bank's own, else the importance model's, cached)."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_importance

    run_importance(config, sm.input.queries, sm.output.importance, sm.output.stats, shard=sm.wildcards.scatteritem)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
