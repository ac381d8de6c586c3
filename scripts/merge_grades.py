"""Rule merge_grades: gather the shards of one grader."""
from autograde.stages import run_merge
from autograde.workflow import script_setup

script_setup(snakemake)  # noqa: F821
i, o = snakemake.input, snakemake.output  # noqa: F821
run_merge(list(i.grades), list(i.stats), list(i.failures), o.grades, o.stats, o.failures,
          dict(snakemake.params.digests))  # noqa: F821
