"""The two records of the core pipeline, registered like every feature's: grading (pool, grades, Rubric-Qrels,
cover, the graders' leaderboards, the correlation with the official leaderboard, the generation metrics) and the
human qrels (their leaderboards and the evaluation-server retrieval metrics).

>>> from autograde.config.model import Config
>>> from autograde.core.layout import Layout
>>> cfg = Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"], "qrels": "qrels.txt"},
...     "graders": [{"name": "sim"}], "evaluation": {"measures": ["map"]}, "cover": {"enabled": False}})
>>> [(lb.grader, lb.qrels, lb.measure) for f in (GRADING, HUMAN_QRELS) for lb in f.leaderboards_of(cfg, Layout())]
[('sim', 'max-4', 'map'), ('human', '-', 'map')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import Feature, ModelStage
from autograde.core.layout import HUMAN, Layout, Leaderboard

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.pipeline.planning import GraderPlan, PlanOptions

COVER_MEASURES = ("cover", "ncover")
"""The measures of a cover leaderboard (Rubric-Cover and normalized Rubric-Cover)."""


def grading_targets(config: Config) -> list[str]:
    """The pool, every grader's grades and qrels variants, the correlation and the generation metrics."""
    lay = Layout.of(config.results_dir)
    out = [lay.pool]
    for g in config.graders:
        out += [lay.grades(g.name), lay.grades(g.name, ".stats.json")]
        out += [lay.qrels(g.name, v) for v in config.qrels_variants_of(g.name)]
    if config.data.official_leaderboard:
        out.append(lay.correlation)
    if config.data.generation:
        out.append(lay.metrics("generation"))
    return out


def grader_leaderboards(config: Config, lay: Layout) -> list[Leaderboard]:
    """Every grader's qrels variants and measures, then every grader's cover leaderboards."""
    measures = list(config.evaluation.measures)
    missing, cover_missing = config.evaluation.missing_queries, config.cover.missing_queries
    out = [Leaderboard(g.name, v, m, lay.leaderboard(g.name, v, m), lay.evaluation(g.name, v), missing_queries=missing)
           for g in config.graders for v in config.qrels_variants_of(g.name) for m in measures]
    out += [Leaderboard(g.name, f"cover-{t}", m, lay.leaderboard(g.name, f"cover-{t}", m), lay.cover(g.name, t),
                        column=m, missing_queries=cover_missing)
            for g in config.graders for t in config.cover_thresholds_of(g.name) for m in COVER_MEASURES]
    return out


def plan_grading(config: Config, pool: pd.DataFrame, queries: dict[str, str], options: PlanOptions
                 ) -> list[GraderPlan]:
    """The grading jobs of every grader (or of those ``options.graders`` names)."""
    from pathlib import Path

    from autograde.grading.shard import build_requests
    from autograde.pipeline.planning import GraderPlan, plan_requests
    from autograde.pipeline.stages import items_for_grader

    out = []
    for g in config.graders:
        if options.graders and g.name not in options.graders:
            continue
        if g.bank in config.bank_generation and not Path(config.banks[g.bank]).exists():
            out.append(GraderPlan("grading", g.name, g.backend, 0, None, 0, note=f"bank {g.bank!r} is not generated "
                                  "yet: its prompts are counted once it exists"))
            continue
        requests = build_requests(pool, queries, items_for_grader(config, g.name, queries))
        out.append(plan_requests(config, "grading", g, g.name, requests, queries, config.grading.shards, options))
    return out


def grading_outputs(config: Config) -> list[tuple[str, str]]:
    lay = Layout.of(config.results_dir)
    return [("leaderboards", lay.leaderboards_dir()),
            ("correlation with the official leaderboard", lay.correlation)]


GRADING = Feature(
    "grading", rules=("ingest.smk", "grade.smk", "evaluate.smk", "metrics.smk"), targets=grading_targets,
    leaderboards=grader_leaderboards, model_stages=(ModelStage("grade", "grading", plan_grading),),
    outputs=grading_outputs)
"""The core pipeline: pool, grading, qrels, cover, leaderboards, correlation."""


def human_targets(config: Config) -> list[str]:
    return [Layout.of(config.results_dir).metrics("retrieval")] if config.data.qrels else []


def human_leaderboards(config: Config, lay: Layout) -> list[Leaderboard]:
    if not config.data.qrels:
        return []
    return [Leaderboard(HUMAN, "-", m, lay.leaderboard(HUMAN, None, m), lay.evaluation(HUMAN),
                        missing_queries=config.evaluation.missing_queries) for m in config.evaluation.measures]


def human_outputs(config: Config) -> list[tuple[str, str]]:
    return [("retrieval metrics under the human qrels", Layout.of(config.results_dir).metrics("retrieval", ".md"))]


HUMAN_QRELS = Feature("human_qrels", targets=human_targets, leaderboards=human_leaderboards, outputs=human_outputs)
"""The human qrels (``data.qrels``): the reference leaderboards and the evaluation server's retrieval metrics."""
