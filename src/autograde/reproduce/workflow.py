"""What ``rules/reproduce.smk`` needs at parse time: the plan, each table's inputs and params, the targets.

The reproduction is independent of the experiment the Snakefile is run with: its plan is
``config/reproduce/reproduce.yaml`` (``$AUTOGRADE_REPRODUCE`` names another), read once at parse time. A
broken plan does not stop the other workflow targets (``make example``): the problem is kept and raised only
when the ``reproduce`` target is asked for.

A table's inputs are the files of its plan entry that exist: an absent file is not an input (the table then
says "input missing"), and once the file is put in place the input list changes and Snakemake reruns exactly
that table. Its settings travel as a param, so editing them reruns it too; nothing else does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograde.core.errors import AutogradeError, ConfigError
from autograde.core.layout import Layout
from autograde.reproduce.config import ReproduceConfig, load_plan, plan_path
from autograde.reproduce.stages import measured_path, reproduction_files, table_inputs, table_params

__all__ = ["ReproductionContext"]


@dataclass
class ReproductionContext:
    """The plan as the rules see it (``plan`` is None when it could not be read; ``problem`` says why)."""

    plan: ReproduceConfig | None
    source: str
    problem: str = ""

    @classmethod
    def load(cls, path: str | None = None) -> ReproductionContext:
        source = plan_path(path)
        try:
            return cls(load_plan(source), source)
        except AutogradeError as exc:
            return cls(None, source, str(exc))

    def _plan(self) -> ReproduceConfig:
        if self.plan is None:
            raise ConfigError(f"the reproduction plan cannot be used:\n{self.problem}")
        return self.plan

    def table_names(self) -> list[str]:
        return self.plan.table_names() if self.plan is not None else []

    def table_output(self) -> str:
        """The output pattern of the table rule (``{table}`` wildcard)."""
        root = self.plan.results_dir if self.plan is not None else "results"
        return Layout.of(root).reproduction_table("{table}")

    def table_inputs(self, table: str) -> list[str]:
        """The table's input files that exist (sorted, unique)."""
        return sorted({f.path for f in table_inputs(self._plan(), table) if Path(f.path).exists()})

    def table_params(self, table: str) -> str:
        return table_params(self._plan(), table)

    # input/params functions of the rules (Snakemake calls them with the job's wildcards)
    def inputs_of(self, wildcards: Any) -> list[str]:
        """Input function of ``reproduce_table``."""
        return self.table_inputs(wildcards.table)

    def params_of(self, wildcards: Any) -> str:
        """Params function of ``reproduce_table``: the table's settings as canonical JSON."""
        return self.table_params(wildcards.table)

    def targets(self, wildcards: Any) -> list[str]:
        """Input function of the ``reproduce`` target: the index and every table (a broken plan fails here,
        when the reproduction is asked for, not when any other target is)."""
        return list(self.index_files().values()) + self.measured()

    def measured(self) -> list[str]:
        plan = self._plan()
        return [measured_path(plan, n) for n in plan.table_names()]

    def index_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """Input function of ``reproduce_index``: every table's measured values and the paper files (a broken plan
        fails here, when the index is asked for)."""
        return {"measured": self.measured(), "papers": list(self._plan().papers)}

    def index_files(self) -> dict[str, str]:
        root = self.plan.results_dir if self.plan is not None else "results"
        return reproduction_files(ReproduceConfig(results_dir=root, papers=[]))
