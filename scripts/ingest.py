"""Rule ingest: check every input and write the normalized tables."""
from pathlib import Path

from autograde.stages import run_ingest
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821 - injected by Snakemake
run_ingest(config, Path(snakemake.output.rankings).parent)  # noqa: F821
