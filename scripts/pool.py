"""Rule pool: judged passages + top-k of every system, split into grading shards."""
from pathlib import Path

from autograde.stages import run_pool
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
run_pool(config, Path(snakemake.input.rankings).parent, snakemake.output.pool, list(snakemake.output.shards))  # noqa: F821
