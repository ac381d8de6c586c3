"""Rule cover: Rubric-Cover / EXAM-Cover leaderboards (cover and n-cover at top-k, threshold tau)."""
from autograde.stages import run_cover
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
i, o = snakemake.input, snakemake.output  # noqa: F821
run_cover(config, i.grades, i.rankings, int(snakemake.wildcards.tau), o.per_query, o.cover, o.ncover)  # noqa: F821
