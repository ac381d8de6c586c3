"""Rule human_sample_judging: the judging page's data (the design's passages not judged yet, with their texts)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.ppi.stages import run_judging_data

    run_judging_data(config, sm.input.design, sm.input.pool, sm.input.queries, sm.output[0],
                   sm.input.get("sample"))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
