"""The named input, params and resources functions of ``rules/banks.smk`` (the .smk file holds rules only)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from autograde.banks.stages import bank_config, generation_shard_digest
from autograde.pipeline.jobs import ModelJobs


class BankRules:
    """Inputs, params and resources of the rules ``generate_bank`` and ``merge_bank`` for one workflow context.

    ``scatter_items`` is Snakemake's ``scatter.generate_bank`` (the shard names at the scatter count in use, so
    ``--set-scatter generate_bank=N`` is respected). Methods taking ``wildcards`` are passed to the rules by name.
    """

    def __init__(self, ctx: Any, scatter_items: Callable[[str], list[str]]) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.scatter_items = scatter_items
        self.jobs = ModelJobs("generate_bank", self.spec)
        """Resources and conda env of the generate_bank jobs, by backend (:mod:`autograde.pipeline.jobs`)."""

    def spec(self, wildcards: Any) -> Any:
        """The model spec of one generated bank (``bank_generation.<bank>``)."""
        return bank_config(self.config, wildcards.bank)

    def bank_constraint(self) -> str:
        """The ``{bank}`` wildcard's constraint: the generated banks' names."""
        return "|".join(re.escape(n) for n in self.config.bank_generation) or "NO_GENERATED_BANK"

    def queries_file(self) -> str:
        return str(self.config.data.queries_file)

    def digest(self, wildcards: Any) -> str:
        """One generation shard's digest: a changed setting or query text reruns exactly the shards it touches."""
        return generation_shard_digest(self.config, wildcards.bank, wildcards.scatteritem, self.ctx.queries)

    def digests(self, wildcards: Any) -> dict[str, str]:
        """Every shard's digest (merge_bank refuses a shard generated for an older config)."""
        return {item: generation_shard_digest(self.config, wildcards.bank, item, self.ctx.queries)
                for item in self.scatter_items("{scatteritem}")}

    def allow_failures(self, wildcards: Any) -> float:
        return self.config.bank_generation[wildcards.bank].allow_failures
