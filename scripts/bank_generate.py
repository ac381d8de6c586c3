"""Rule generate_bank: draft one shard's test items with an LLM (cache first, repair prompts, failures recorded)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.banks.stages import run_generate_shard
    from autograde.pipeline.jobs import run_model_job

    o, bank, shard = sm.output, sm.wildcards.bank, sm.wildcards.scatteritem
    command = ["bank", "generate", "--bank", bank, "--shard", shard, "--out-bank", o.bank,
               "--out-failures", o.failures, "--out-stats", o.stats, "--digest", sm.params.digest]
    run_model_job(config.bank_generation[bank], f"bank {bank} shard {shard}",
                  lambda: run_generate_shard(config, bank, shard, o.bank, o.failures, o.stats, threads=sm.threads,
                                             digest=sm.params.digest),
                  command, dict(sm.config), sm.threads)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
