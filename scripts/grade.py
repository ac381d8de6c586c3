"""Rule grade: grade one pool shard with one grader (cache first, model only for misses)."""
from autograde.doctor import GPUUnavailableError, require_gpu
from autograde.log import logger
from autograde.stages import run_grade
from autograde.workflow import script_setup

config = script_setup(snakemake)  # noqa: F821
# a GPU grader's job that got no GPU fails here, at once, with the fix (before any model is loaded)
try:
    require_gpu(config.grader(snakemake.wildcards.grader))  # noqa: F821
except GPUUnavailableError as exc:
    logger.error("%s", exc)  # into the rule's log too
    raise
out = snakemake.output  # noqa: F821
run_grade(config, snakemake.wildcards.grader, snakemake.input.pool, snakemake.input.queries,  # noqa: F821
          out.grades, out.stats, out.failures, shard=snakemake.wildcards.scatteritem,  # noqa: F821
          threads=snakemake.threads, digest=snakemake.params.digest)  # noqa: F821
