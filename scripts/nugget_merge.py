"""Rule merge_nuggets: one assessor's assignments (parquet, TREC RAG JSONL), evaluation with run means, stats."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import run_merge_nuggets

    i, o = sm.input, sm.output
    out = {k: o[k] for k in ("assignments", "jsonl", "evaluation", "stats", "failures")}
    run_merge_nuggets(config, sm.wildcards.assessor, list(i.assignments), list(i.scores), list(i.stats),
                      list(i.failures), i.answers, i.queries, i.importance, out, dict(sm.params.digests))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
