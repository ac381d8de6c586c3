"""Rule reproduce_table: measure one table of the reproduction plan (status, values, provenance)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.reproduce.config import load_plan
    from autograde.reproduce.stages import run_table

    run_table(load_plan(sm.params.plan), sm.wildcards.table, sm.output.measured)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
