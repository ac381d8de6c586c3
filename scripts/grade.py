"""Rule grade: grade one pool shard with one grader (cache first, model only for misses)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.pipeline.jobs import run_model_job
    from autograde.pipeline.stages import run_grade

    i, o, shard = sm.input, sm.output, sm.wildcards.scatteritem
    grader = config.grader(sm.wildcards.grader)
    command = ["grade", "--grader", grader.name, "--pool", i.pool, "--queries", i.queries, "--out", o.grades,
               "--stats", o.stats, "--failures", o.failures, "--shard", shard, "--digest", sm.params.digest]
    run_model_job(grader, f"grader {grader.name} shard {shard}",
                  lambda: run_grade(config, grader.name, i.pool, i.queries, o.grades, o.stats, o.failures,
                                    shard=shard, threads=sm.threads, digest=sm.params.digest),
                  command, dict(sm.config), sm.threads)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
