"""Rule merge_grades: gather the shards of one grader."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_merge

    i, o = sm.input, sm.output
    run_merge(list(i.grades), list(i.stats), list(i.failures), o.grades, o.stats, o.failures, dict(sm.params.digests))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
