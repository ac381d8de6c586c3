"""Rule reproduce_index: every paper's values next to the measured ones (index.md, index.json, index.html)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.reproduce.config import load_plan
    from autograde.reproduce.stages import build_reproduction_index

    o = sm.output
    build_reproduction_index(load_plan(sm.params.plan), sm.params.plan, None, o.index, o.json, o.html)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
