"""Rule ingest: check every input and write the normalized tables."""
from pathlib import Path

from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.stages import run_ingest

    run_ingest(config, Path(sm.output.rankings).parent)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
