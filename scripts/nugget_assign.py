"""Rule assign_nuggets: one shard's (whole answer, nugget) grades (cache first), or a grader's grades mapped."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import assessor, run_assign_shard
    from autograde.nuggets.workflow import assessor_grader
    from autograde.pipeline.jobs import run_model_job

    i, o, shard = sm.input, sm.output, sm.wildcards.scatteritem
    a = assessor(config, sm.wildcards.assessor)
    command = ["nuggets", "assign", "--assessor", a.name, "--answers", i.answers, "--queries", i.queries,
               "--out", o.grades, "--stats", o.stats, "--failures", o.failures, "--shard", shard,
               "--digest", sm.params.digest]
    run_model_job(assessor_grader(config, a), f"assessor {a.name} shard {shard}",
                  lambda: run_assign_shard(config, a.name, i.answers, i.queries, o.grades, o.stats, o.failures,
                                           shard=shard, threads=sm.threads, digest=sm.params.digest,
                                           grader_grades=i.get("grader_grades"), rankings=i.get("rankings")),
                  command, dict(sm.config), sm.threads)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
