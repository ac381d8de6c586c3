"""Rule pool: judged passages + top-k of every system, split into grading shards."""
from pathlib import Path

from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_pool

    run_pool(config, Path(sm.input.rankings).parent, sm.output.pool, list(sm.output.shards))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
