"""Rule nugget_importance: vital / okay per nugget of one shard (the bank's own, else the importance model's, cached)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.importance import importance_model
    from autograde.nuggets.stages import run_importance
    from autograde.pipeline.jobs import run_model_job

    o, shard = sm.output, sm.wildcards.scatteritem
    command = ["nuggets", "importance", "--queries", sm.input.queries, "--shard", shard, "--out", o.importance,
               "--stats", o.stats]
    run_model_job(importance_model(config), f"nugget importance shard {shard}",
                  lambda: run_importance(config, sm.input.queries, o.importance, o.stats, shard=shard,
                                         threads=sm.threads),
                  command, dict(sm.config), sm.threads)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
