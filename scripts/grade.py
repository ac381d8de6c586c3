"""Rule grade: grade one pool shard with one grader (cache first, model only for misses)."""
from autograde.stages import run_grade
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
out = snakemake.output  # noqa: F821
run_grade(config, snakemake.wildcards.grader, snakemake.input.pool, snakemake.input.queries,  # noqa: F821
          out.grades, out.stats, out.failures, shard=snakemake.wildcards.scatteritem,  # noqa: F821
          threads=snakemake.threads)  # noqa: F821
