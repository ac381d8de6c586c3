"""Rule assign_nuggets: one shard's (whole answer, nugget) grades (cache first), or a grader's grades mapped."""
from autograde.workflow import run_rule


def stage(config, sm):
    from autograde.nuggets.stages import assessor, run_assign_shard

    i, o, shard = sm.input, sm.output, sm.wildcards.scatteritem
    a = assessor(config, sm.wildcards.assessor)
    if a.backend == "vllm":  # vLLM runs in its own environment, through `autograde nuggets assign` (docs/vllm.md)
        from autograde.nuggets.stages import assign_shard_in_vllm_env

        assign_shard_in_vllm_env(dict(sm.config), a, i.answers, i.queries, o.grades, o.stats, o.failures, shard,
                                 sm.threads, sm.params.digest)
        return
    run_assign_shard(config, a.name, i.answers, i.queries, o.grades, o.stats, o.failures, shard=shard,
                     threads=sm.threads, digest=sm.params.digest, grader_grades=i.get("grader_grades"),
                     rankings=i.get("rankings"))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
