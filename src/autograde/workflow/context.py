"""Everything the Snakefile needs at parse time, and the start and end of every rule script.

The Snakefile stays a table of contents: it builds one :class:`WorkflowContext` (the experiment resolved and
validated once; queries and banks read and checked; in the main process every input checked, so bad input
fails before any job starts) and the rules call its methods through the named functions in
``rules/common.smk``. Rule scripts run :func:`run_rule`, which logs to the rule's log file and turns every
:class:`~autograde.core.errors.AutogradeError` into its message (file, line, fix) without a traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograde.config.experiment import resolve_workflow_config, validate_config
from autograde.config.model import Config
from autograde.core.errors import AutogradeError, Problems, UnknownNameError
from autograde.core.layout import Leaderboard, QrelsVariant
from autograde.core.log import logger, setup_logging
from autograde.core.paths import expand_globs
from autograde.io.banks.model import BankItem
from autograde.io.queries import read_queries


@dataclass
class WorkflowContext:
    config: Config
    queries: dict[str, str]
    items: dict[str, dict[str, list[BankItem]]] = field(default_factory=dict)
    """grader name -> query -> items."""
    source: str = ""
    """Where the experiment config came from."""

    @classmethod
    def from_snakemake_config(cls, given: dict[str, Any], check_inputs: bool = True,
                              configfiles: Sequence[str | Path] = (),
                              command_line: dict[str, Any] | None = None) -> WorkflowContext:
        """Resolve the experiment (replacing ``given``'s content with it, so rule scripts see the same config),
        validate it, read queries and banks, and (``check_inputs``) check every input a run will read.

        ``configfiles`` and ``command_line`` are Snakemake's ``--configfile`` paths and ``--config`` values (to
        refuse an incomplete ``--configfile`` and to attribute problems to the command line)."""
        from autograde.grading.shard import direct_items
        from autograde.io.banks.read import read_banks

        raw, source = resolve_workflow_config(given, configfiles, command_line)
        config = validate_config(raw, source)
        if config.data.dataset:  # the dataset's queries and qrels as files, named in the config every job sees
            from autograde.workflow.checks import resolve_dataset_at

            config = resolve_dataset_at(config, source)
            raw = {**raw, "data": {**raw["data"], "queries": config.data.queries, "qrels": config.data.qrels}}
        given.clear()
        given.update(raw)
        problems = Problems()
        queries = read_queries(config.data.queries_file, problems)
        from autograde.config.banks import banks_read_at_parse_time

        # a generated bank (graded as generated) is an output of this workflow: never read at parse time
        banks = read_banks(banks_read_at_parse_time(config), problems, queries, config.data.queries_file)
        problems.raise_if_any()
        if check_inputs:
            from autograde.workflow.checks import check_experiment

            check_experiment(config, source, cached=True)
        items = {g.name: (direct_items(queries) if g.bank == "direct" else banks[g.bank].by_query())
                 for g in config.graders if g.bank == "direct" or g.bank in banks}
        return cls(config, queries, items, source.path)

    @property
    def results(self) -> str:
        return self.config.results_dir

    def grader_names(self) -> list[str]:
        return [g.name for g in self.config.graders]

    def feature_qrels(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Qrels the features make that are evaluated like a grader's (the calibrated labels): source -> variant ->
        ``{mode, threshold, level}``."""
        from autograde.workflow.features import FEATURES

        return {name: variants for f in FEATURES if f.qrels is not None for name, variants in f.qrels(self.config).items()}

    def qrels_sources(self) -> list[str]:
        """Every name that has qrels to evaluate: the graders, and the features' (``calibrated`` when it is on)."""
        return self.grader_names() + list(self.feature_qrels())

    def qrels_variants(self, grader: str) -> list[str]:
        return self.config.qrels_variants_of(grader)

    def qrels_variant(self, grader: str, variant: str) -> dict[str, Any]:
        """``{mode, threshold, level}`` of one grader's qrels variant (``max-4``): rule params, parsed once here."""
        made = self.feature_qrels().get(grader, {})
        if variant in made:
            return dict(made[variant])
        if variant not in self.qrels_variants(grader):
            raise UnknownNameError(f"unknown qrels variant {variant!r} of grader {grader!r}; configured: "
                                   f"{', '.join(self.qrels_variants(grader))}")
        v = QrelsVariant.parse(variant)
        return {"mode": v.mode, "threshold": v.tau, "level": v.level}

    def measures(self) -> list[str]:
        return list(self.config.evaluation.measures)

    def run_files(self) -> list[str]:
        return expand_globs(self.config.data.runs)

    def corpus_files(self) -> list[str]:
        return expand_globs(self.config.data.corpus)

    def answer_files(self) -> list[str]:
        return expand_globs(self.config.data.answers)

    def bank_file(self, grader: str) -> list[str]:
        g = self.config.grader(grader)
        return [] if g.bank == "direct" else [self.config.banks[g.bank]]

    def bank_is_generated(self, grader: str) -> bool:
        """Whether the grader's bank is written by this workflow (rule merge_bank), not read at parse time."""
        from autograde.config.banks import is_graded_as_generated

        return is_graded_as_generated(self.config, self.config.grader(grader).bank)

    def shard_digest(self, grader: str, scatteritem: str) -> str:
        from autograde.pipeline.stages import grader_digest

        if grader not in self.items:  # a bank a feature makes: keyed by what its items are generated from
            from autograde.workflow.features import FEATURES

            for f in FEATURES:
                digest = f.bank_shard_digest(self.config, grader, scatteritem, self.queries) if f.bank_shard_digest \
                    else None
                if digest is not None:
                    return digest
            raise UnknownNameError(f"grader {grader!r}: its bank {self.config.grader(grader).bank!r} was not read and "
                                   "no feature makes it")
        return grader_digest(self.config, grader, scatteritem, self.queries, self.items[grader])

    def leaderboards(self) -> list[Leaderboard]:
        """Every leaderboard of the run (:func:`autograde.workflow.leaderboards.leaderboards`, the one list)."""
        from autograde.workflow.leaderboards import leaderboards

        return leaderboards(self.config)

    def leaderboard_table(self) -> list[dict[str, str]]:
        """Every leaderboard as rule params (the correlation rules' ``leaderboards``)."""
        return [lb.as_dict() for lb in self.leaderboards()]

    def leaderboard_files(self) -> list[str]:
        return [lb.path for lb in self.leaderboards()]

    def final_outputs(self) -> list[str]:
        """What ``rule all`` builds: every feature's targets and every leaderboard (unique, in order)."""
        from autograde.workflow.features import FEATURES

        out = [p for f in FEATURES for p in f.targets_of(self.config)] + self.leaderboard_files()
        return list(dict.fromkeys(out))

    def site_inputs(self) -> list[str]:
        """What the features' site pages read (inputs of the site rule)."""
        from autograde.workflow.features import FEATURES

        return list(dict.fromkeys(p for f in FEATURES for p in f.site_inputs_of(self.config)))

    def rule_files(self) -> list[str]:
        """The rules files of every feature (the Snakefile includes them, in order)."""
        from autograde.workflow.features import rule_files

        return [f"rules/{r}" for r in rule_files()]


def script_setup(snakemake: Any) -> Config:
    """Common start of every rule script: log to the rule's log file, set threads, validate the config."""
    from autograde.core.runtime import set_threads

    setup_logging()
    if getattr(snakemake, "log", None):
        Path(snakemake.log[0]).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(snakemake.log[0], mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
    set_threads(getattr(snakemake, "threads", None))
    return validate_config(dict(snakemake.config), "the workflow's experiment config")


def run_rule(snakemake: Any, stage: Callable[[Config, Any], Any]) -> None:
    """Run one rule's stage: ``stage(config, snakemake)``.

    A user-fixable error (:class:`AutogradeError`) is written to the rule's log and to stderr as its message,
    without a traceback, and the job exits with status 1 (Snakemake then removes its partial outputs).
    """
    try:
        config = script_setup(snakemake)
        stage(config, snakemake)
    except AutogradeError as exc:
        logger.error("%s", exc)
        for handler in logger.handlers:
            handler.flush()
        sys.exit(1)
