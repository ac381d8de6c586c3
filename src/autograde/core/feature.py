"""The record a feature package registers: its hooks, which every hub of the workflow loops over.

A feature (test-bank generation, nugget scores, LLM-RUBRIC, the judge audit, ...) is one package under
``autograde/``, one config section, one rules file and one :class:`Feature` record, registered by one line in
:data:`autograde.workflow.features.FEATURES`. The hubs (``rule all``'s targets, the one list of leaderboards,
``autograde plan``, the pre-job checks, the review site, ``autograde outputs``, the CLI, the Snakefile's includes)
loop over the registered records and never name a feature. Every hook is optional (pluggy's idea: a feature
implements the hooks it has):

>>> from autograde.core.layout import Layout
>>> f = Feature("example", targets=lambda config: ["results/example/table.tsv"])
>>> f.targets_of(None), f.leaderboards_of(None, Layout.of("results")), f.outputs_of(None)
(['results/example/table.tsv'], [], [])

This module holds the record types only; a hook's arguments are the experiment config and values the hub builds
(their types are named for the type checker, not imported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config
    from autograde.core.errors import Problems
    from autograde.core.layout import Layout, Leaderboard
    from autograde.io.banks.model import Bank
    from autograde.pipeline.ingest import Inputs
    from autograde.pipeline.planning import GraderPlan, PlanOptions

__all__ = ["CheckContext", "Feature", "ModelStage", "QrelsParams", "SiteContext", "SiteSection"]

QrelsParams = dict[str, Any]
"""How one qrels variant is made and evaluated: ``mode``, ``threshold`` and trec_eval's relevance ``level``."""


@dataclass(frozen=True)
class ModelStage:
    """A stage whose jobs run a model: the Snakemake rule of its jobs (whose ``resources:`` and ``conda:`` come from
    :class:`autograde.pipeline.jobs.ModelJobs`) and its plan for ``autograde plan`` (pairs, cache, tokens, time).

    A test checks that every rule sized by ``ModelJobs`` is the rule of one registered stage, so a new model stage
    cannot be missing from the plan."""

    rule: str
    title: str
    """The plan's stage column (``grading``, ``bank generation``)."""
    plan: Callable[[Config, pd.DataFrame, dict[str, str], PlanOptions], list[GraderPlan]]
    """``plan(config, pool, queries, options)``: one plan per model this stage runs (none when it is off)."""


@dataclass
class CheckContext:
    """What the pre-job checks have read: the config and where its keys are, the queries, the banks read at parse
    time, and (in the input phase) the ingested inputs. Every check adds to ``problems``."""

    config: Config
    src: ConfigSource
    problems: Problems
    queries: dict[str, str]
    banks: dict[str, Bank]
    inputs: Inputs | None = None


@dataclass
class SiteContext:
    """What a feature's site pages are built with: the experiment config (a feature that is off shows nothing, even
    where old files remain), the results folder, the site being built, the values every page shares (title,
    relevance level, ...), the page writer (which counts pages and bytes), the file-name slug, the graders and the
    queries."""

    config: Config
    results: Path
    out: Path
    common: dict[str, Any]
    write: Callable[[Path, str, dict[str, Any]], None]
    stats: dict[str, Any]
    slug: Callable[[str], str]
    graders: list[str] = field(default_factory=list)
    queries: dict[str, str] = field(default_factory=dict)
    """Every query's text by id."""


@dataclass(frozen=True)
class SiteSection:
    """One section of the site's index page: its anchor, its heading and its HTML (the feature's own pages are
    written through :attr:`SiteContext.write`)."""

    anchor: str
    title: str
    html: str


@dataclass(frozen=True)
class Feature:
    """One feature's hooks (each optional; a hub skips a feature without the hook).

    ``section`` is its config section (a field of :class:`autograde.config.model.Config`), ``rules`` its rules files
    under ``rules/`` (the Snakefile includes them in the order the features are registered), ``cli`` the module of
    its command group (``register(subparsers)``).
    """

    name: str
    section: str | None = None
    rules: tuple[str, ...] = ()
    cli: str | None = None
    targets: Callable[[Config], list[str]] | None = None
    """Files ``rule all`` builds (none when the feature is off)."""
    leaderboards: Callable[[Config, Layout], list[Leaderboard]] | None = None
    """Its leaderboards, in the order every consumer lists them (correlation, audit, site, ``outputs``)."""
    model_stages: tuple[ModelStage, ...] = ()
    check_config: Callable[[CheckContext], None] | None = None
    """Checks of its section against the queries and banks, before any job."""
    check_inputs: Callable[[CheckContext], None] | None = None
    """Checks of its inputs against the ingested runs, qrels and pool, before any job."""
    input_files: Callable[[Config], list[str]] | None = None
    """Files it reads beside the experiment's data (a change makes the checks run again)."""
    site_inputs: Callable[[Config], list[str]] | None = None
    """Files its site pages read (inputs of the site rule)."""
    site: Callable[[SiteContext], SiteSection | None] | None = None
    """Writes its site pages; returns its section of the index page (None: nothing to show)."""
    outputs: Callable[[Config], list[tuple[str, str]]] | None = None
    """(what, path) of its main results, for ``autograde outputs`` and the end of a run."""
    qrels: Callable[[Config], dict[str, dict[str, QrelsParams]]] | None = None
    """Qrels it makes that are evaluated like a grader's: source name -> variant -> ``{mode, threshold, level}``."""
    bank_shard_digest: Callable[[Config, str, str, dict[str, str]], str | None] | None = None
    """``(config, grader, shard, queries)``: the digest of a grading shard whose bank this feature makes (None: the
    grader's bank is not its), so that the shard reruns exactly when what its items come from changes."""

    def targets_of(self, config: Config) -> list[str]:
        return list(self.targets(config)) if self.targets else []

    def leaderboards_of(self, config: Config, lay: Layout) -> list[Leaderboard]:
        return list(self.leaderboards(config, lay)) if self.leaderboards else []

    def input_files_of(self, config: Config) -> list[str]:
        return list(self.input_files(config)) if self.input_files else []

    def site_inputs_of(self, config: Config) -> list[str]:
        return list(self.site_inputs(config)) if self.site_inputs else []

    def outputs_of(self, config: Config) -> list[tuple[str, str]]:
        return list(self.outputs(config)) if self.outputs else []
