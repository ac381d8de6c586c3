"""The review site of an experiment: the site rule and ``autograde reports site`` build it the same way, with the
experiment's one list of leaderboards and every registered feature's pages.

The site itself (index, grader and query pages, the link check, the per-query cache) is
:func:`autograde.reports.site.build_site`; this module hands it what only the application layer knows: which
leaderboards the experiment makes (:func:`autograde.workflow.leaderboards.leaderboards`) and the features' site hooks
(:attr:`autograde.core.feature.Feature.site`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autograde.config.model import Config


def build_experiment_site(config: Config, out: str | Path | None = None, results: str | Path | None = None,
                          graders: Sequence[str] | None = None, official: str | Path | None = None,
                          relevance_level: int | None = None) -> dict[str, Any]:
    """Build the review site of ``config``'s results (``results``: another folder with the same layout) into ``out``
    (default ``<results>/site``); returns the site's page and byte counts (:func:`autograde.reports.site.build_site`).
    """
    from autograde.core.layout import Layout
    from autograde.reports.site import build_site
    from autograde.workflow.features import FEATURES
    from autograde.workflow.leaderboards import leaderboards

    root = str(results or config.results_dir)
    cfg = config if root == config.results_dir else config.model_copy(update={"results_dir": root})
    rc = cfg.reports
    return build_site(root, out or Layout.of(root).site, rc,
                      list(graders) if graders is not None else [g.name for g in cfg.graders],
                      official if official is not None else cfg.data.official_leaderboard,
                      relevance_level if relevance_level is not None else rc.level,
                      cache_dir=cfg.grading.cache_dir, leaderboards=leaderboards(cfg), config=cfg,
                      sections=[f.site for f in FEATURES if f.site is not None])
