"""Rule merge_bank: join the generation shards into results/banks/<bank>.jsonl.gz (failures checked, stats summed)."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.banks.stages import run_merge_bank

    out = sm.output
    run_merge_bank(config, sm.wildcards.bank, list(sm.input.banks), list(sm.input.failures), list(sm.input.stats),
                   out.bank, out.failures, out.stats, expected_digests=sm.params.digests)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
