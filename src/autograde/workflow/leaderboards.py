"""The ONE list of every leaderboard an experiment makes: what ``rule all``, the correlation rule, the correlation
report, the judge audit, the review site and the CLI all read.

>>> from autograde.config.model import Config
>>> cfg = Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"], "qrels": "qrels.txt"},
...     "graders": [{"name": "sim"}], "evaluation": {"measures": ["map"]}, "cover": {"enabled": False}})
>>> [(lb.grader, lb.qrels, lb.measure) for lb in leaderboards(cfg)]
[('sim', 'max-4', 'map'), ('human', '-', 'map')]

Each feature lists its own (:attr:`autograde.core.feature.Feature.leaderboards`), in the order the features are
registered: every grader's qrels variants and measures, then every grader's cover leaderboards; the calibrated
labels; the human qrels; the nugget scores of every assessor. A new kind of leaderboard is a feature's hook, and
every consumer has it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.layout import Layout, Leaderboard

if TYPE_CHECKING:
    from autograde.config.model import Config


def leaderboards(config: Config, results: str | Path | None = None) -> list[Leaderboard]:
    """Every leaderboard of the experiment, under ``results`` (default: its ``results_dir``)."""
    from autograde.workflow.features import FEATURES

    lay = Layout.of(results or config.results_dir)
    return [lb for f in FEATURES for lb in f.leaderboards_of(config, lay)]
