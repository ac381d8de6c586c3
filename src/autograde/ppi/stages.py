"""The human-sample stages over files: draw a round of the judging design (and its worklist), answer a worklist
from a qrels file (demos and simulations), estimate every measure of every system with intervals (the workflow's
rule and the CLI call these)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from autograde.config.human_sample import HumanSampleConfig
from autograde.core.errors import ConfigError, InputError, Problem
from autograde.core.ids import PairKey
from autograde.core.layout import Layout
from autograde.core.log import logger
from autograde.core.schema import required
from autograde.core.tables import read_table
from autograde.core.text import atomic_write_text
from autograde.metrics.estimable import estimable_measure
from autograde.ppi.design import Design, draw_round, read_design, write_design
from autograde.ppi.estimate import Settings, estimate_tables
from autograde.ppi.measures import RankedPool
from autograde.ppi.pool import pool_order, ranked_pool
from autograde.ppi.predictions import Prediction, predict
from autograde.ppi.sample import Sample, design_rounds, read_judgments, simple_random_rounds
from autograde.ppi.workflow import (
    draw_paths,
    estimate_outputs,
    measures_of,
    prediction_source,
    predictions_of,
    relevance_level_of,
)

if TYPE_CHECKING:
    from autograde.config.model import Config

WORKLIST_COLUMNS = ["round", "query_id", "passage_id", "query", "passage"]
"""What an assessor reads: nothing that predicts the answer (no inclusion probability, no grader's label; the
design file keeps the probabilities)."""


def required_section(config: Config) -> HumanSampleConfig:
    """The experiment's ``human_sample:`` section, or a ConfigError saying how to add one."""
    return required(config.human_sample, "human_sample", "add one; docs/human_sample.md shows how")


def load_pool(pool_path: str | Path) -> tuple[list[PairKey], pd.DataFrame]:
    """The pool's units in their one order, and the pool table (text per unit)."""
    pool = read_table(pool_path, ["query_id", "passage_id", "text"])
    keys = pool_order(list(zip(pool["query_id"].astype(str), pool["passage_id"].astype(str), strict=True)))
    return keys, pool


def load_ranked(rankings_path: str | Path, keys: list[PairKey], missing_queries: str) -> RankedPool:
    return ranked_pool(read_table(rankings_path, ["run", "query_id", "passage_id", "score"]), keys, missing_queries)


def predictions(config: Config, keys: list[PairKey], names: list[str] | None = None) -> list[Prediction]:
    h = required_section(config)
    chosen = [p for p in predictions_of(config) if names is None or p.name in names]
    if names is not None and len(chosen) != len(names):
        known = [p.name for p in predictions_of(config)]
        raise ConfigError(f"unknown prediction(s) {sorted(set(names) - {p.name for p in chosen})}; configured: "
                          f"{', '.join(known) or 'none'}")
    return [predict(p, config, keys, h.levels, relevance_level_of(config)) for p in chosen]


def read_sample(config: Config, keys: list[PairKey], qrels: str | None = None, design: str | None = None) -> Sample:
    """The judged sample and its rounds (``qrels`` / ``design``: the section's files unless given)."""
    h = required_section(config)
    qrels = qrels or h.qrels
    design = design if design is not None else h.design
    if not qrels:
        raise ConfigError("human_sample.qrels is not set: there are no human judgments to estimate from (fix: "
                          "judge the worklist, export the qrels and name the file there)")
    grades, lines = read_judgments(qrels, keys, h.levels)
    if design:
        rounds, info = design_rounds(read_design(design, keys), grades, lines, qrels, design)
    else:
        rounds, info = simple_random_rounds(grades, h.rate)
    if not rounds or int(np.isfinite(grades).sum()) == 0:
        raise InputError([Problem(str(qrels), None, "no judgment of a pooled passage: the estimates would rest on "
                                  "the predictions alone and report them with certainty (zero-width intervals)",
                                  "judge the design's worklist (autograde sample draw, then the judging page) and "
                                  "export the judgments to this file before estimating")])
    return Sample(grades, rounds, info)


def run_estimates(config: Config, pool_path: str | Path, rankings_path: str | Path, outputs: dict[str, str],
                  qrels: str | None = None, design: str | None = None) -> dict[str, Any]:
    """Every prediction's estimates and differences (``outputs``: the files of
    :func:`autograde.ppi.workflow.estimate_outputs`) and the summary; returns the summary."""
    h = required_section(config)
    keys, _ = load_pool(pool_path)
    ranked = load_ranked(rankings_path, keys, config.evaluation.missing_queries)
    sample = read_sample(config, keys, qrels, design)
    settings = Settings(list(h.levels), relevance_level_of(config), h.confidence, h.alpha, h.variance,
                        order=h.order)
    measures = [estimable_measure(m) for m in measures_of(config)]
    skipped = [m for m in config.evaluation.measures if m not in {x.name for x in measures}] \
        if h.measures is None else []
    summary: dict[str, Any] = {"sample": sample.info, "measures": [m.name for m in measures],
                               "skipped_measures": skipped, "systems": len(ranked.systems),
                               "queries": len(ranked.queries), "confidence": h.confidence, "alpha": h.alpha,
                               "variance": h.variance, "order": h.order, "relevance_level": settings.relevance_level,
                               "predictions": {}, "cautions": {m.name: m.caution for m in measures if m.caution}}
    for name, text in summary["cautions"].items():
        logger.warning("human sample: %s: %s", name, text)
    for pred in predictions(config, keys):
        est, diff = estimate_tables(measures, ranked, pred.probs, sample.grades, sample.rounds, settings)
        atomic_write_text(outputs[f"{pred.name}.estimates"], est.to_csv(sep="\t", index=False, float_format="%.6g"))
        atomic_write_text(outputs[f"{pred.name}.differences"], diff.to_csv(sep="\t", index=False,
                                                                            float_format="%.6g"))
        summary["predictions"][pred.name] = {"source": pred.source, "missing": pred.missing,
                                             "groups": {m.name: int(est.loc[est["measure"] == m.name, "group"].max())
                                                        for m in measures}}
        logger.info("human sample: %s: %d measure(s) x %d system(s) from %d judgments", pred.name, len(measures),
                    len(ranked.systems), sample.info["judged"])
    atomic_write_text(outputs["summary"], json.dumps(summary, indent=2, sort_keys=True, default=_json) + "\n")
    return summary


def _json(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(type(x))


def _one_line(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip()


def draw_outputs(config: Config) -> dict[str, str]:
    """The estimates of the experiment's own draw (the files of :func:`estimate_outputs`, under ``draw/``: the
    workflow's estimates of ``human_sample.design`` are never overwritten by another sample's)."""
    root = Layout.of(config.results_dir).human_sample("")
    return {k: v.replace(root, draw_paths(config)["dir"] + "/", 1) for k, v in estimate_outputs(config).items()}


def missing_inputs(config: Config, prediction: str | None = None) -> list[str]:
    """The files a draw reads that do not exist yet (the workflow makes them: the pool, the rankings, the queries,
    the prediction's labels)."""
    lay = Layout.of(config.results_dir)
    need = [lay.pool, lay.ingest("rankings"), lay.ingest("queries")]
    chosen = [p for p in predictions_of(config) if prediction is None or p.name == prediction][:1]
    need += [prediction_source(p, config)[1] for p in chosen]
    return [f for f in need if not Path(f).is_file()]


def run_draw(config: Config, kind: str, budget: float, seed: int, design_path: str, worklist_path: str | None,
             prediction: str | None = None, uniform_share: float = 0.2, importance_depth: int = 10,
             qrels: str | None = None) -> dict[str, Any]:
    """Draw the next round of the design at ``design_path`` (a new design when the file does not exist) and
    write its worklist; the judgments so far (``qrels``; None: none) are the pilot."""
    h = required_section(config)
    lay = Layout.of(config.results_dir)
    keys, pool = load_pool(lay.pool)
    ranked = load_ranked(lay.ingest("rankings"), keys, config.evaluation.missing_queries)
    chosen = predictions(config, keys, [prediction] if prediction else None)[:1]
    if not chosen:
        raise ConfigError("no prediction to draw with (fix: configure human_sample.predictions or graders)")
    pred = chosen[0]
    design = read_design(design_path, keys) if Path(design_path).is_file() else Design(keys)
    labels: dict[PairKey, int] = {}
    if qrels and Path(qrels).is_file():
        grades, _ = read_judgments(qrels, keys, h.levels)
        labels = {keys[i]: int(grades[i]) for i in np.flatnonzero(~np.isnan(grades))}
    record = draw_round(design, kind, budget, seed, ranked, pred.probs, h.levels, labels, pred.name,
                        uniform_share, importance_depth, where=f"the budget of round {len(design.rounds) + 1}")
    write_design(design_path, design)
    if worklist_path:
        write_worklist(worklist_path, design, len(design.rounds) - 1, pool, lay)
    logger.info("design %s: round %d (%s) drew %d of %d pooled passages (budget %g)", design_path, record["round"],
                kind, record["drawn"], len(keys), budget)
    return record


def worklist_table(design: Design, round_index: int, pool: pd.DataFrame, queries: dict[str, str]) -> pd.DataFrame:
    """The passages of one round to judge: round, query, passage id, query and passage text (one line each); blind
    to the inclusion probability (a passage the design targets is likelier to be mispredicted)."""
    text = {(str(q), str(p)): t for q, p, t in pool[["query_id", "passage_id", "text"]].itertuples(index=False)}
    rows = [(round_index + 1, q, p, _one_line(queries.get(q, "")), _one_line(text.get((q, p), "")))
            for i, (q, p) in enumerate(design.keys) if design.drawn[round_index][i]]
    return pd.DataFrame(rows, columns=WORKLIST_COLUMNS)


def write_worklist(path: str | Path, design: Design, round_index: int, pool: pd.DataFrame, lay: Layout) -> None:
    qs = read_table(lay.ingest("queries"), ["query_id", "query_text"])
    table = worklist_table(design, round_index, pool, dict(zip(qs["query_id"], qs["query_text"], strict=True)))
    atomic_write_text(path, table.to_csv(sep="\t", index=False))


def run_answer(config: Config, full_qrels: str, out: str, design_path: str | None = None) -> int:
    """Judge every drawn passage of the design from a qrels file (unjudged there: grade 0), keeping the judgments
    already in ``out``: a stand-in assessor for demos and simulations. Returns the number of judgments written."""
    from autograde.io.trec import Qrels, read_qrels, write_qrels

    h = required_section(config)
    lay = Layout.of(config.results_dir)
    keys, _ = load_pool(lay.pool)
    design = read_design(design_path or h.design or "", keys)
    truth = read_qrels(full_qrels)
    have: Qrels = read_qrels(out) if Path(out).is_file() else {}
    for i in np.flatnonzero(design.all_drawn):
        q, d = keys[i]
        have.setdefault(q, {}).setdefault(d, int(truth.get(q, {}).get(d, 0)))
    write_qrels(out, have)
    return sum(len(v) for v in have.values())


def judging_data(config: Config, design_path: str, pool_path: str | Path, queries_path: str | Path,
               qrels: str | None = None) -> dict[str, Any]:
    """What the judging page shows: every drawn passage not judged yet (query, passage text, round), the judgments
    already made (the page exports them with the new ones, so its file is the whole sample), the grade scale, and a
    key naming this design (the page keeps its state per key). Blind: neither the inclusion probabilities nor any
    grader's label are in it (the page's data is readable in the page)."""
    from autograde.core.ids import file_sha256

    h = required_section(config)
    keys, pool = load_pool(pool_path)
    design = read_design(design_path, keys)
    qs = read_table(queries_path, ["query_id", "query_text"])
    queries = dict(zip(qs["query_id"], qs["query_text"], strict=True))
    qrels = qrels or h.qrels
    known: dict[PairKey, int] = {}
    if qrels and Path(qrels).is_file():
        grades, _ = read_judgments(qrels, keys, h.levels)
        known = {keys[i]: int(grades[i]) for i in np.flatnonzero(~np.isnan(grades))}
    items = []
    for k in range(len(design.rounds)):
        table = worklist_table(design, k, pool, queries)
        items += [{"q": r.query_id, "d": r.passage_id, "round": int(r.round), "query": r.query, "text": r.passage}
                  for r in table.itertuples(index=False) if (r.query_id, r.passage_id) not in known]
    return {"key": file_sha256(design_path)[:16], "levels": list(h.levels), "items": items,
            "known": [[q, d, g] for (q, d), g in sorted(known.items())], "rounds": len(design.rounds),
            "design": str(design_path)}


def run_judging_data(config: Config, design_path: str, pool_path: str | Path, queries_path: str | Path, out: str,
                   qrels: str | None = None) -> None:
    data = judging_data(config, design_path, pool_path, queries_path, qrels)
    atomic_write_text(out, json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n")
    logger.info("judging page data: %d passage(s) to judge, %d judged (%s)", len(data["items"]), len(data["known"]),
                out)


def leaderboard_text(estimates: pd.DataFrame, measure: str, confidence: float) -> str:
    """One measure's leaderboard as a fixed-width table: rank (the composite order), group (systems no comparison
    separates), system, estimate with its interval, LLM-only value, composite."""
    t = estimates[estimates["measure"] == measure].sort_values("rank")
    head = ["rank", "group", "system", "estimate", f"{confidence:.0%} interval", "LLM-only", "composite"]
    body = [[str(int(r.rank)), str(int(r.group)), str(r.system), f"{r.estimate:.4f}", f"[{r.low:.4f}, {r.high:.4f}]",
             f"{r.llm_only:.4f}", f"{r.composite:.4f}"] for r in t.itertuples(index=False)]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    right = {0, 1, 3, 5, 6}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths,
                                                                                                     strict=True)))

    return "\n".join([line(head), line(["-" * w for w in widths]), *(line(b) for b in body)])


def estimates_text(config: Config, outputs: dict[str, str], summary: dict[str, Any]) -> str:
    """Every prediction's and measure's leaderboard (:func:`leaderboard_text`) from the written estimates."""
    parts = []
    for name in summary["predictions"]:
        est = pd.read_csv(outputs[f"{name}.estimates"], sep="\t", dtype={"system": str})
        for m in summary["measures"]:
            caution = summary.get("cautions", {}).get(m)
            parts.append(f"{m} ({name}; {summary['sample']['judged']} judgments, order: {summary['order']})"
                         + (f"\ncaution: {caution}" if caution else "") + "\n"
                         + leaderboard_text(est, m, summary["confidence"]))
    return "\n\n".join(parts)
