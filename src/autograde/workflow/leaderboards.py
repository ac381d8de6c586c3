"""The ONE list of every leaderboard an experiment makes: what ``rule all``, the correlation rule, the correlation
report, the review site and the CLI all read.

>>> from autograde.config.model import Config
>>> cfg = Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"], "qrels": "qrels.txt"},
...     "graders": [{"name": "sim"}], "evaluation": {"measures": ["map"]}, "cover": {"enabled": False}})
>>> [(lb.grader, lb.qrels, lb.measure) for lb in leaderboards(cfg)]
[('sim', 'max-4', 'map'), ('human', '-', 'map')]

Order: every grader's qrels variants and measures, then every grader's cover leaderboards; the calibrated labels; the human
qrels; the nugget scores of every assessor. A new kind of leaderboard is added here, and every consumer has it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.layout import CALIBRATED, HUMAN, Layout, Leaderboard

if TYPE_CHECKING:
    from autograde.config.model import Config

COVER_MEASURES = ("cover", "ncover")
"""The measures of a cover leaderboard (Rubric-Cover and normalized Rubric-Cover)."""


def leaderboards(config: Config, results: str | Path | None = None) -> list[Leaderboard]:
    """Every leaderboard of the experiment, under ``results`` (default: its ``results_dir``)."""
    from autograde.calibrated.workflow import calibrated_qrels_variant, calibrated_section
    from autograde.config.nuggets import NUGGET_VARIANT

    lay = Layout.of(results or config.results_dir)
    measures = list(config.evaluation.measures)
    out: list[Leaderboard] = []
    out += [Leaderboard(g.name, v, m, lay.leaderboard(g.name, v, m), lay.evaluation(g.name, v))
            for g in config.graders for v in config.qrels_variants_of(g.name) for m in measures]
    out += [Leaderboard(g.name, f"cover-{t}", m, lay.leaderboard(g.name, f"cover-{t}", m), lay.cover(g.name, t), column=m)
            for g in config.graders for t in config.cover_thresholds_of(g.name) for m in COVER_MEASURES]
    calibrated = calibrated_section(config)
    if calibrated is not None:
        v = calibrated_qrels_variant(calibrated)
        out += [Leaderboard(CALIBRATED, v, m, lay.leaderboard(CALIBRATED, v, m), lay.evaluation(CALIBRATED, v))
                for m in measures]
    if config.data.qrels:
        out += [Leaderboard(HUMAN, "-", m, lay.leaderboard(HUMAN, None, m), lay.evaluation(HUMAN)) for m in measures]
    if config.nuggets is not None:
        out += [Leaderboard(a.name, NUGGET_VARIANT, m, lay.leaderboard(a.name, NUGGET_VARIANT, m),
                            lay.evaluation(a.name, NUGGET_VARIANT)) for a in config.nuggets.assessors
                for m in config.nuggets.measures]
    return out
