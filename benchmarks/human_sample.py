"""Simulation of the human-sample estimates on a judged collection (DL20 by default): how often the 95% intervals
cover the full-human value, how wide they are, how far one sample's estimates can be off (the tails an organizer
who draws one sample meets), how well each leaderboard ranks the systems, and where a run built to please the judge
lands.

    make dl20-synth                                              # the 59 synthetic runs (work/dl20-synth)
    .venv/bin/python benchmarks/human_sample.py                  # DL20: 500 repetitions, writes docs/generated/
    .venv/bin/python benchmarks/human_sample.py --reps 50 --out /tmp/sim   # a quick look
    .venv/bin/python benchmarks/human_sample.py --measures ndcg_cut_10 --predictions calibrated \\
        --designs stratified --budgets 0.05 --reps 1000 --out /tmp/sim    # one configuration, closely

Any collection: a qrels file (the truth), a folder of runs (any number; ``tools/synth_runs.py QRELS DIR`` makes
synthetic ones for any qrels) and one or more predictions::

    .venv/bin/python tools/synth_runs.py my.qrels work/my-runs --runs 30
    .venv/bin/python benchmarks/human_sample.py --qrels my.qrels --runs work/my-runs \\
        --prediction llm=qrels:llm.qrels:1 --prediction cal=table:passages.parquet --out /tmp/my-sim

A prediction is ``NAME=qrels:PATH[:LEVEL]`` (a grader's labels: a label >= LEVEL, default the relevance level,
predicts the relevance level, lower labels grade 0), ``NAME=table:PATH`` (a calibrated-qrels passage table with
``p_level_<grade>`` columns: the predicted distribution), or ``NAME=calibrated:DIR`` (logistic regression over the
qrels files in DIR, cross-validated by query against the truth: each query's distribution comes from a model fitted
on the other folds' judgments). Without ``--prediction`` the DL20 defaults: the eight released FLAN-T5 prompt qrels
(binary prompts and Thomas: a label >= 1 predicts grade 2; the 0-5 self-ratings: >= 4 predicts grade 2), calibrated
qrels over the eight, and the embedded grader (all-MiniLM-L6-v2 of the query against random words: DL20's texts
cannot be redistributed; an uninformative prediction, on purpose).

Truth: the qrels over the judged pool (a passage outside it counts as not relevant, as trec_eval counts it).
Designs at each budget (2, 5, 10, 20% of the pool, as expected sizes): ``simple_random`` (one round); ``stratified``
and ``active``: a simple random pilot of half the budget, then the design with the other half using the pilot (the
two rounds weighted 1/2 each, as ``autograde sample draw`` twice does). Each configuration runs ``--reps``
repetitions with its own seed (``--linear-reps`` for P@10, whose first ``--reps`` are the same samples); P@10 and
nDCG@10 for every prediction, design and budget; MAP and RR on the smaller grid of :data:`EXTRA` (coverage only).
Every estimator of ``--variants`` runs on the same samples; the workflow's is ``tuned+floor``.

Per configuration and variant: coverage of the 95% intervals (mean over systems, and the worst system), the median
width relative to the human-only interval, the tails (99th percentile and maximum absolute error and half-width over
systems and samples; the share of samples in which some system is off by more than 0.1 and 0.5; the share of
estimates or interval ends outside the measure's range), and Kendall's tau of the prediction-powered, composite,
LLM-only and human-only leaderboards against the full-human one.

The gamed run (``--gamed-budgets``, 10% by default): per prediction, a run built to please that judge is added to the
systems: per query it ranks first the passages the prediction grades relevant and the human judgments do not, then
the rest by the prediction's expected grade. Per configuration: its full-human and LLM-only rank, and in how many
samples its rank under the composite order (and under the estimate) is within 5 of its full-human rank.

Writes ``human_sample_simulation.md`` (the tables), ``human_sample_headline.md`` (the lines README.md and
docs/human_sample.md quote), ``.json`` (every number; a test checks the quotes) and ``.svg`` under ``--out``, and with
``--measurements FILE`` the worst tails over the headline configurations at 10% under ``human_sample`` in FILE.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
DL20 = REPO.parent / "shared" / "data" / "dl20"
SYNTH = REPO / "work" / "dl20-synth"
LEVELS = [0, 1, 2, 3]
RELEVANT = 2
BUDGETS = [0.02, 0.05, 0.10, 0.20]
DESIGNS = ["simple_random", "stratified", "active"]
GOAL_MEASURES = ["P_10", "ndcg_cut_10"]
EXTRA_MEASURES = ["map", "recip_rank"]
EXTRA: dict[str, Any] = {"predictions": ["calibrated", "Sun"], "designs": ["simple_random", "active"],
                         "budgets": [0.10, 0.20], "reps": 200}
"""MAP and RR (coverage shown, no goal) on a smaller grid: a full-depth ranking makes them ~20x costlier."""
PROMPT_LEVEL = {"FagB": 1, "FagB_few": 1, "HELM": 1, "Sun": 1, "Sun_few": 1, "Thomas": 1,
                "NuggetSelfRatedPrompt": 4, "QuestionSelfRatedUnanswerablePromptWithChoices": 4}
"""A label >= this predicts the human relevance level (binary prompts and Thomas' 0-2 scale: 1; 0-5 self-ratings:
4, the workbench's default threshold)."""
HEADLINE_PREDICTIONS = ["Sun", "Thomas", "QuestionSelfRatedUnanswerablePromptWithChoices", "calibrated"]
"""The DL20 predictions of the committed run (two point-label prompts, a 0-5 self-rating, the calibrated model)."""
TAIL_BUDGET = 0.10
"""The budget whose worst tails go to docs/measurements.json."""
WITHIN = 5
"""The gamed run's rank counts as found when it is within this many places of its full-human rank."""
ORDERS = {"composite": "", "composite-fitted": "_fitted"}
"""The composite orders the simulation computes on the same samples (the workflow's ``order`` values), and the
suffix of their rows' keys (``tau_composite``, ``gamed_composite_within``, ...)."""


def default_order_suffix() -> str:
    """The key suffix of the workflow's default order (``human_sample.order``): the headline reports that order."""
    from autograde.config.human_sample import HumanSampleConfig

    return ORDERS[str(HumanSampleConfig.model_fields["order"].default)]


@dataclass
class Collection:
    """The truth (pool keys, grades), the runs (as a table) and the query texts (for the embedded grader)."""

    name: str
    keys: list[tuple[str, str]]
    grades: np.ndarray
    runs: pd.DataFrame
    queries: dict[str, str]


def load(qrels_path: Path, runs_dir: Path) -> Collection:
    """The pool (every judged passage) and the runs of ``runs_dir`` (every file, TREC format)."""
    from autograde.core.errors import Problems
    from autograde.io.run_table import read_run_table
    from autograde.io.trec import read_qrels
    from autograde.ppi.pool import pool_order

    if not qrels_path.is_file():
        sys.exit(f"{qrels_path}: no such qrels file (DL20: make data; docs/data.md)")
    qrels = read_qrels(qrels_path)
    keys = pool_order([(q, d) for q, docs in qrels.items() for d in docs])
    grades = np.array([qrels[q][d] for q, d in keys], dtype=np.float64)
    files = sorted(f for f in glob.glob(str(runs_dir / "*")) if Path(f).is_file() and not Path(f).name.startswith("."))
    if len(files) < 2:
        hint = "make dl20-synth" if runs_dir == SYNTH / "runs" else f"python tools/synth_runs.py {qrels_path} {runs_dir}"
        sys.exit(f"{runs_dir}: {len(files)} run file(s); a leaderboard needs at least 2 (make them: {hint})")
    probs = Problems()
    runs = pd.concat([read_run_table(f, probs) for f in files], ignore_index=True)
    probs.raise_if_any()
    queries: dict[str, str] = {}
    if qrels_path == DL20 / "qrels.dl20-passage.txt":
        queries = json.loads((DL20 / "dl20-queries.json").read_text())
    return Collection(qrels_path.name, keys, grades, runs[["run", "query_id", "passage_id", "score"]], queries)


def point(labels: np.ndarray, level: float) -> np.ndarray:
    """Labels as a distribution over the grades: a label >= ``level`` predicts the relevance level, else 0."""
    from autograde.ppi.predictions import grade_distribution, on_human_scale

    return grade_distribution(on_human_scale(labels, (level, RELEVANT), None), LEVELS)


def parse_prediction(spec: str) -> tuple[str, str, str, float | None]:
    """``NAME=KIND:PATH[:LEVEL]`` as (name, kind, path, level)."""
    if "=" not in spec or ":" not in spec.split("=", 1)[1]:
        sys.exit(f"--prediction {spec!r}: expected NAME=qrels:PATH[:LEVEL], NAME=table:PATH or NAME=calibrated:DIR")
    name, rest = spec.split("=", 1)
    kind, path = rest.split(":", 1)
    level = None
    if kind == "qrels" and ":" in path and path.rsplit(":", 1)[1].replace(".", "", 1).isdigit():
        path, lv = path.rsplit(":", 1)
        level = float(lv)
    if kind not in ("qrels", "table", "calibrated"):
        sys.exit(f"--prediction {spec!r}: unknown kind {kind!r} (qrels, table or calibrated)")
    return name, kind, path, level


def default_predictions() -> list[tuple[str, str, str, float | None]]:
    """DL20's: the eight prompt qrels, calibrated qrels over them, the embedded grader."""
    out: list[tuple[str, str, str, float | None]] = [
        (name, "qrels", str(DL20 / "autograded-qrels" / f"{name}.qrel"), float(level))
        for name, level in PROMPT_LEVEL.items()]
    out.append(("calibrated", "calibrated", str(DL20 / "autograded-qrels"), None))
    out.append(("embedded", "embedded", "", None))
    return out


def predictions(col: Collection, specs: list[tuple[str, str, str, float | None]], qrels_path: Path, work: Path,
                chosen: list[str] | None = None) -> dict[str, np.ndarray]:
    """Every prediction's distribution over the grades per pool unit (only those ``chosen`` when given)."""
    from autograde.io.trec import read_qrels

    out: dict[str, np.ndarray] = {}
    for name, kind, path, level in specs:
        if chosen and name not in chosen:
            continue
        if kind == "qrels":
            q = read_qrels(path)
            labels = np.array([q.get(a, {}).get(b, -1) for a, b in col.keys], dtype=np.float64)
            out[name] = point(labels, level if level is not None else float(RELEVANT))
        elif kind == "table":
            out[name] = table(col.keys, Path(path))
        elif kind == "calibrated":
            out[name] = calibrated(col.keys, Path(path), qrels_path, work)
        else:
            out[name] = point(embedded(col.keys, col.queries, work), 4)
    if chosen:
        missing = sorted(set(chosen) - set(out))
        if missing:
            sys.exit(f"--predictions: unknown {', '.join(missing)} (known: {', '.join(n for n, *_ in specs)})")
    return out


def table(keys: list[tuple[str, str]], path: Path) -> np.ndarray:
    """A calibrated-qrels passage table's distribution per unit (grade 0 where it has no row)."""
    t = pd.read_parquet(path).astype({"query_id": str, "passage_id": str}).set_index(["query_id", "passage_id"])
    cols = [f"p_level_{v}" for v in LEVELS]
    out = np.zeros((len(keys), len(LEVELS)))
    out[:, 0] = 1.0
    idx = t.index.get_indexer(pd.MultiIndex.from_tuples(keys))
    out[idx >= 0] = t[cols].to_numpy(dtype=np.float64)[idx[idx >= 0]]
    return out / out.sum(axis=1, keepdims=True)


def calibrated(keys: list[tuple[str, str]], sources_dir: Path, qrels_path: Path, work: Path) -> np.ndarray:
    """Logistic regression over the qrels files of ``sources_dir``, cross-validated by query (cached in ``work``)."""
    tag = zlib.crc32(f"{sources_dir.resolve()}|{qrels_path.resolve()}".encode())
    path = work / f"calibrated-{tag:08x}.parquet"
    if not path.is_file():
        from autograde.calibrated.cv import cross_validate_qrels
        from autograde.calibrated.features import features_from_sources
        from autograde.config.rubric import CalibratedQrelsConfig
        from autograde.io.trec import read_qrels

        sources = sorted(str(p) for p in sources_dir.iterdir() if p.is_file())
        cfg = CalibratedQrelsConfig.model_validate({"sources": sources, "judgments": str(qrels_path),
                                                    "estimators": ["logistic"], "logistic_c": [0.1, 1.0]})
        _, _, t = cross_validate_qrels(cfg, features_from_sources(sources, cfg), read_qrels(cfg.judgments))
        path.parent.mkdir(parents=True, exist_ok=True)
        t.to_parquet(path)
    return table(keys, path)


def embedded(keys: list[tuple[str, str]], queries: dict[str, str], work: Path) -> np.ndarray:
    """The embedded grader's grade (0-5) of each judged passage against its query, on random texts."""
    path = work / "embedded.npy"
    if not path.is_file():
        if not queries:
            sys.exit("the embedded prediction needs the query texts (DL20 only)")
        from autograde.config.model import GraderConfig
        from autograde.grading.base import GradeRequest
        from autograde.grading.embedded import EmbeddedGrader, Options

        rng = random.Random(0)
        words = "the of and to in a is that for it as was with be by on not this are or from at which".split()
        words += [f"w{i}" for i in range(3000)]
        grader = EmbeddedGrader(GraderConfig(name="embedded", bank="direct", prompt_class="direct"), Options())
        reqs = [GradeRequest(q, queries[q], d, " ".join(rng.choice(words) for _ in range(60)), q, "query", queries[q])
                for q, d in keys]
        grades = np.array([r.grade for r in grader.grade_batch(reqs)], dtype=np.float64)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, grades)
    return np.asarray(np.load(path), dtype=np.float64)


def gamed_run(col: Collection, probs: np.ndarray, name: str) -> pd.DataFrame:
    """A run built to please the judge ``probs``: per query, first the passages it predicts relevant and the human
    judgments grade below the relevance level (by predicted grade), then every other judged passage by predicted
    grade."""
    expected = probs @ np.asarray(LEVELS, dtype=np.float64)
    pleasing = (probs[:, np.asarray(LEVELS) >= RELEVANT].sum(axis=1) >= 0.5) & (col.grades < RELEVANT)
    t = pd.DataFrame({"query_id": [q for q, _ in col.keys], "passage_id": [d for _, d in col.keys],
                      "key": pleasing * 10.0 + expected})
    t = t.sort_values(["query_id", "key", "passage_id"], ascending=[True, False, True], kind="mergesort")
    t["score"] = -t.groupby("query_id").cumcount().astype(np.float64)
    return t.assign(run=name)[["run", "query_id", "passage_id", "score"]]


def rounds_for(design: str, frac: float, reps: int, rng: np.random.Generator, grades: np.ndarray,
               probs: np.ndarray, weight_w: np.ndarray) -> list[Any]:
    """The rounds of ``reps`` draws of one design at one budget (a pilot of half the budget for the targeted ones)."""
    from autograde.ppi.design import round_probabilities
    from autograde.ppi.estimators import Round

    n = len(grades)
    if design == "simple_random":
        pi = np.full((reps, n), frac)
        return [Round(pi, rng.random((reps, n)) < pi, 1.0)]
    pi1 = np.full((reps, n), frac / 2)
    d1 = rng.random((reps, n)) < pi1
    pi2, _ = round_probabilities(design, frac / 2 * n, d1, d1, np.broadcast_to(grades, d1.shape), 1.0 / pi1,
                                 probs, LEVELS, weight_w, 0.2)
    d2 = (rng.random((reps, n)) < pi2) & ~d1
    return [Round(pi1, d1, 0.5), Round(pi2, d1 | d2, 0.5)]


VARIANTS = ["fixed", "fixed+floor", "tuned", "tuned+floor", "tuned-all", "tuned-all+floor", "system-all",
            "system-all+floor"]
"""How the estimates are made: ``fixed``: plain prediction-powered (lam = 1); ``tuned``: the workflow's default power
tuning (one cross-fitted weight per linear measure for the leaderboard, lam = 1 for nDCG, MAP, RR); ``tuned-all``:
the same weight for the nonlinear measures too (fitted on the whole sample); ``system-all``: one weight per system,
every measure; ``+floor``: the one-error variance floor (on the human-only baseline too, so widths compare like with
like). ``tuned+floor`` is the workflow's default."""
DEFAULT_VARIANT = "tuned+floor"
POWER = {"fixed": "none", "tuned-all": "leaderboard", "system-all": "system"}


def rank_of(values: np.ndarray, index: int) -> np.ndarray:
    """The rank (1 = best) of system ``index`` in each row of ``values`` ``(B, S)`` (ties: the better rank)."""
    return np.asarray(1 + (values > values[:, index : index + 1]).sum(axis=1), dtype=np.int64)


def simulate(name: str, probs: np.ndarray, design: str, frac: float, measures: list[str], reps: int, chunk: int,
             ranked: Any, grades: np.ndarray, truth: dict[str, np.ndarray], llm: dict[str, np.ndarray],
             weight_w: np.ndarray, variants: list[str], gamed: int | None = None) -> list[dict[str, Any]]:
    """The rows of one configuration (``gamed``: the index of the gamed run among the systems; its ranks are
    reported and the taus leave it out)."""
    from autograde.core.stats import kendall_matrix
    from autograde.metrics.estimable import estimable_measure
    from autograde.ppi.composite import fay_herriot
    from autograde.ppi.estimators import estimate_measures, zero_gains
    from autograde.ppi.measures import gains_from_distribution, gains_from_grades

    pred = gains_from_distribution(probs, LEVELS, RELEVANT)
    zero = zero_gains(pred)
    obs = gains_from_grades(grades, LEVELS, RELEVANT)
    seed = zlib.crc32(f"{name}/{design}/{frac}".encode())
    rng = np.random.default_rng(seed)
    keep = np.ones(len(ranked.systems), dtype=bool)
    if gamed is not None:
        keep[gamed] = False

    def power_of(v: str, linear: bool) -> str:  # the estimate_measures call a variant reads
        b = v.split("+")[0]
        return ("tuned-all" if linear else "fixed") if b == "tuned" else b

    lin = [estimable_measure(m).linear for m in measures]
    powers = sorted({power_of(v, x) for v in variants for x in lin})
    keys = ("cover", "hcover", "ratio", "err", "half", "outside", "tau", "ctau", "ctauf", "htau", "size", "lam",
            "floored", "grank_c", "grank_cf", "grank_e")
    acc: dict[tuple[str, str], dict[str, list[Any]]] = {(m, v): {k: [] for k in keys} for m in measures
                                                          for v in variants}
    for start in range(0, reps, chunk):
        b = min(chunk, reps - start)
        rounds = rounds_for(design, frac, b, rng, grades, probs, weight_w)
        size = (rounds[-1].sampled.sum(axis=1)).astype(np.float64)
        meas = [estimable_measure(m) for m in measures]
        ppi = {p: estimate_measures(meas, ranked, pred, obs, rounds, keep_residuals=False, power_tuning=POWER[p],
                                    variance_floor=True, tune_nonlinear=True) for p in powers}
        hums = estimate_measures(meas, ranked, zero, obs, rounds, keep_residuals=False, variance_floor=True)
        for m in measures:
            t = truth[m]
            for v in variants:
                floor = v.endswith("+floor")
                e, h = ppi[power_of(v, estimable_measure(m).linear)][m], hums[m]
                lo, hi = e.interval(0.95, floor)
                hlo, hhi = h.interval(0.95, floor)
                est = e.reported
                low, high = e.bounds if e.bounds is not None else (-np.inf, np.inf)
                a = acc[(m, v)]
                a["cover"].append((lo <= t) & (t <= hi))
                a["hcover"].append((hlo <= t) & (t <= hhi))
                with np.errstate(divide="ignore", invalid="ignore"):
                    a["ratio"].append(((hi - lo) / (hhi - hlo))[:, keep].ravel())
                a["err"].append(np.abs(est - t)[:, keep])
                a["half"].append(((hi - lo) / 2.0)[:, keep])
                a["outside"].append(((est < low) | (est > high) | (lo < low) | (hi > high))[:, keep])
                psi = np.asarray(e.variance if floor else e.raw_variance)
                comp = fay_herriot(e.estimate, psi, llm[m], "one", STATE.get("spread", "adjusted")).estimate
                comp_f = fay_herriot(e.estimate, psi, llm[m], "fitted", STATE.get("spread", "adjusted")).estimate
                a["tau"].append(kendall_matrix(e.estimate[:, keep], t[keep]))
                a["ctau"].append(kendall_matrix(comp[:, keep], t[keep]))
                a["ctauf"].append(kendall_matrix(comp_f[:, keep], t[keep]))
                a["htau"].append(kendall_matrix(h.estimate[:, keep], t[keep]))
                a["size"].append(size)
                lam = np.asarray(e.lam)  # always set by estimate_measures
                a["lam"].append(lam[:, keep].ravel())
                a["floored"].append(e.floored[:, keep].ravel() if floor and e.floored is not None
                                    else np.zeros(int(keep.sum()) * b))
                if gamed is not None:
                    a["grank_c"].append(rank_of(comp, gamed))
                    a["grank_cf"].append(rank_of(comp_f, gamed))
                    a["grank_e"].append(rank_of(e.estimate, gamed))
    rows = []
    for m in measures:
        for v in variants:
            a = acc[(m, v)]
            cover = np.concatenate(a["cover"])[:, keep].mean(axis=0)
            hcover = np.concatenate(a["hcover"])[:, keep].mean(axis=0)
            ratio = np.concatenate(a["ratio"])
            fin = ratio[np.isfinite(ratio)]
            err = np.concatenate(a["err"])
            half = np.concatenate(a["half"])
            t = truth[m]
            row = {"prediction": name, "design": design, "budget": frac, "measure": m, "variant": v,
                   "reps": reps, "judged": float(np.concatenate(a["size"]).mean()),
                   "coverage_mean": float(cover.mean()), "coverage_worst": float(cover.min()),
                   "human_coverage_mean": float(hcover.mean()), "human_coverage_worst": float(hcover.min()),
                   "width_ratio": float(np.nanmedian(fin)) if fin.size else float("nan"),
                   "wider_than_human": float((fin > 1.0 + 1e-9).mean()) if fin.size else float("nan"),
                   "p99_abs_error": float(np.quantile(err, 0.99)), "max_abs_error": float(err.max()),
                   "p99_half_width": float(np.quantile(half, 0.99)), "max_half_width": float(half.max()),
                   "share_off_0.1": float((err.max(axis=1) > 0.1).mean()),
                   "share_off_0.5": float((err.max(axis=1) > 0.5).mean()),
                   "outside_range": float(np.concatenate(a["outside"]).mean()),
                   "lambda_mean": float(np.concatenate(a["lam"]).mean()),
                   "floored": float(np.concatenate(a["floored"]).mean()),
                   "tau_ppi": float(np.nanmean(np.concatenate(a["tau"]))),
                   "tau_llm": float(kendall_matrix(llm[m][None, keep], t[keep])[0]),
                   "tau_composite": float(np.nanmean(np.concatenate(a["ctau"]))),
                   "tau_composite_fitted": float(np.nanmean(np.concatenate(a["ctauf"]))),
                   "tau_human": float(np.nanmean(np.concatenate(a["htau"])))}
            if gamed is not None:
                g = int(gamed)
                human_rank = int(rank_of(t[None], g)[0])
                est_rank = np.concatenate(a["grank_e"])
                row.update(gamed=True, gamed_human_rank=human_rank, gamed_llm_rank=int(rank_of(llm[m][None], g)[0]),
                           gamed_estimate_within=float((np.abs(est_rank - human_rank) <= WITHIN).mean()),
                           gamed_estimate_rank_median=float(np.median(est_rank)))
                for suffix, key in (("", "grank_c"), ("_fitted", "grank_cf")):
                    comp_rank = np.concatenate(a[key])
                    row[f"gamed_composite{suffix}_within"] = float((np.abs(comp_rank - human_rank) <= WITHIN).mean())
                    row[f"gamed_composite{suffix}_rank_median"] = float(np.median(comp_rank))
            rows.append(row)
    return rows


def svg_plot(rows: list[dict[str, Any]], predictions: list[str]) -> str:
    """Coverage (mean) and width ratio against the budget, one panel per (measure, quantity), one line per
    (prediction, design)."""
    panels = [(m, q) for m in GOAL_MEASURES for q in ("coverage_mean", "width_ratio")]
    w, h, pad = 330, 230, 42
    colors = {"simple_random": "#1f77b4", "stratified": "#2ca02c", "active": "#d62728"}
    dashes = {p: d for p, d in zip(predictions, ["", "6,3", "2,2", "8,3,2,3"], strict=False)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 40}" height="{2 * h + 80}" '
             'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>']
    for k, (m, q) in enumerate(panels):
        x0, y0 = 20 + (k % 2) * (w + 10), 20 + (k // 2) * (h + 20)
        lo, hi = (0.5, 1.0) if q == "coverage_mean" else (0.0, 1.6)

        def sx(b: float, x0: float = x0) -> float:
            return x0 + pad + BUDGETS.index(b) * (w - pad - 10) / (len(BUDGETS) - 1)

        def sy(v: float, y0: float = y0, lo: float = lo, hi: float = hi) -> float:
            return y0 + h - pad + (h - pad - 10) * -(min(max(v, lo), hi) - lo) / (hi - lo)

        title = "coverage (mean over systems)" if q == "coverage_mean" else "width / human-only width"
        parts.append(f'<text x="{x0 + pad}" y="{y0 + 8}">{m}: {title}</text>')
        parts.append(f'<line x1="{x0 + pad}" y1="{sy(lo)}" x2="{x0 + w - 10}" y2="{sy(lo)}" stroke="#888"/>')
        parts.append(f'<line x1="{x0 + pad}" y1="{sy(lo)}" x2="{x0 + pad}" y2="{sy(hi)}" stroke="#888"/>')
        for tick in ((0.5, 0.7, 0.9, 0.95, 1.0) if q == "coverage_mean" else (0.0, 0.5, 0.7, 1.0, 1.5)):
            parts.append(f'<text x="{x0 + 4}" y="{sy(tick) + 4}">{tick:g}</text>')
            parts.append(f'<line x1="{x0 + pad}" y1="{sy(tick)}" x2="{x0 + w - 10}" y2="{sy(tick)}" stroke="#eee"/>')
        for bgt in BUDGETS:
            parts.append(f'<text x="{sx(bgt) - 8}" y="{y0 + h - pad + 16}">{bgt:.0%}</text>')
        goal = 0.93 if q == "coverage_mean" else 0.7
        parts.append(f'<line x1="{x0 + pad}" y1="{sy(goal)}" x2="{x0 + w - 10}" y2="{sy(goal)}" stroke="#f90" '
                     'stroke-dasharray="4,2"/>')
        for p in predictions:
            for d in DESIGNS:
                pts = [(sx(r["budget"]), sy(r[q])) for r in rows if r["prediction"] == p and r["design"] == d
                       and r["measure"] == m and r["budget"] in BUDGETS]
                if pts:
                    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                    parts.append(f'<polyline points="{path}" fill="none" stroke="{colors[d]}" stroke-width="1.5" '
                                 f'stroke-dasharray="{dashes.get(p, "")}"/>')
    ly = 2 * h + 50
    for i, d in enumerate(DESIGNS):
        parts.append(f'<line x1="{20 + i * 120}" y1="{ly}" x2="{45 + i * 120}" y2="{ly}" stroke="{colors[d]}" '
                     f'stroke-width="2"/><text x="{50 + i * 120}" y="{ly + 4}">{d}</text>')
    for i, p in enumerate(predictions):
        parts.append(f'<line x1="{380 + i * 130}" y1="{ly}" x2="{405 + i * 130}" y2="{ly}" stroke="black" '
                     f'stroke-dasharray="{dashes.get(p, "")}"/><text x="{410 + i * 130}" y="{ly + 4}">{p}</text>')
    parts.append(f'<text x="20" y="{ly + 22}">orange dashes: the goals (coverage 0.93; width 0.7 at 10%)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def repetitions(meta: dict[str, Any]) -> str:
    """``N repetitions per configuration``, or the repetitions of each goal measure when they differ."""
    by = meta.get("reps_by_measure")
    if not by:
        return f"{meta['reps']} repetitions per configuration"
    return "repetitions per configuration: " + ", ".join(f"{r} ({m})" for m, r in by.items())


def merge_rows(path: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """``rows`` and the rows of the earlier run at ``path`` (its JSON) of every (measure, variant, gamed) this run did
    not compute; the two runs must have the same collection, predictions, designs and budgets (the seeds then give
    the same samples). Updates ``meta`` (the variants, the earlier run's seconds)."""
    old = json.loads(path.read_text(encoding="utf-8"))
    for key in ("collection", "predictions", "designs", "budgets"):
        if old["meta"].get(key) != meta[key]:
            sys.exit(f"--merge {path}: its {key} {old['meta'].get(key)} differ from this run's {meta[key]}; rerun "
                     "with the same --qrels, --runs, --predictions, --designs and --budgets")
    done = {(r["measure"], r["variant"], bool(r.get("gamed"))) for r in rows}
    kept = [r for r in old["rows"] if (r["measure"], r["variant"], bool(r.get("gamed"))) not in done]
    variants = [v for v in VARIANTS if v in set(meta["variants"]) | set(old["meta"]["variants"])]
    meta.update(variants=variants, merged={"from": str(path.relative_to(REPO) if path.is_relative_to(REPO) else path),
                                           "seconds": old["meta"]["seconds"], "rows": len(kept)})
    return rows + kept


def reps_meta(rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """``reps_by_measure``: the default variant's repetitions of each goal measure, when they differ."""
    default = meta["default_variant"]
    by = {m: max(r["reps"] for r in rows if r["measure"] == m and r["variant"] == default and not r.get("gamed"))
          for m in GOAL_MEASURES if any(r["measure"] == m and r["variant"] == default and not r.get("gamed")
                                        for r in rows)}
    if len(set(by.values())) > 1:
        meta["reps_by_measure"] = by


def merged_note(meta: dict[str, Any]) -> str:
    m = meta.get("merged")
    return f"; {m['rows']} rows kept from the earlier run {m['from']}, {m['seconds']:.0f} s" if m else ""


def _tau(row: dict[str, Any], key: str) -> str:
    return f"{row[key]:.3f}" if key in row else "-"


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [f"# Human-sample estimates on {meta['collection']}: a simulation", "",
             f"Generated by `benchmarks/human_sample.py` ({repetitions(meta)}, "
             f"{meta['seconds']:.0f} s on {meta['machine']}{merged_note(meta)}). "
             f"Truth: the qrels over the judged pool ({meta['pool']} passages, {meta['queries']} queries); "
             f"{meta['systems']} runs ({meta['runs']}). Coverage of the 95% intervals (mean over systems / worst "
             "system), the median width relative to the human-only interval on the same sample, the tails over "
             "systems and samples (99th percentile / largest absolute error; 99th percentile / largest half-width; "
             "share of samples with some system off by more than 0.1 / 0.5; share of estimates or interval ends "
             "outside the measure's range), and Kendall's tau against the full-human leaderboard (prediction-powered, "
             "the composite order with a slope of one and with a fitted slope, LLM-only, human-only; mean over "
             "repetitions). See docs/human_sample.md for the estimators.", ""]
    for m in GOAL_MEASURES + EXTRA_MEASURES:
        sub = [r for r in rows if r["measure"] == m and not r.get("gamed")]
        if not sub:
            continue
        lines += [f"## {m}", "", "| prediction | design | budget | variant | judged | coverage mean | coverage worst | "
                  "human-only coverage mean / worst | width / human | p99 / max error | p99 / max half-width | "
                  "off > 0.1 / 0.5 | outside range | mean lambda | floored | tau PPI | tau composite | "
                  "tau composite (fitted slope) | tau LLM | tau human |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sub:
            lines.append(f"| {r['prediction']} | {r['design']} | {r['budget']:.0%} | {r['variant']} | "
                         f"{r['judged']:.0f} | {r['coverage_mean']:.3f} | {r['coverage_worst']:.3f} | "
                         f"{r['human_coverage_mean']:.3f} / {r['human_coverage_worst']:.3f} | {r['width_ratio']:.2f} | "
                         f"{r['p99_abs_error']:.3f} / {r['max_abs_error']:.3f} | "
                         f"{r['p99_half_width']:.3f} / {r['max_half_width']:.3f} | "
                         f"{r['share_off_0.1']:.3f} / {r['share_off_0.5']:.3f} | {r['outside_range']:.3f} | "
                         f"{r['lambda_mean']:.2f} | {r['floored']:.3f} | "
                         f"{r['tau_ppi']:.3f} | {_tau(r, 'tau_composite')} | {_tau(r, 'tau_composite_fitted')} | "
                         f"{r['tau_llm']:.3f} | {r['tau_human']:.3f} |")
        lines.append("")
    gamed = [r for r in rows if r.get("gamed")]
    if gamed:
        lines += ["## The gamed run", "",
                  "Per prediction, a run that ranks first the passages the prediction grades relevant and the human "
                  "judgments do not (then the rest by the prediction's grade) is added to the systems. Its rank under "
                  "full human judgments and under the LLM-only leaderboard, and the share of samples in which its "
                  f"rank under the composite orders (and under the estimate) is within {WITHIN} of its full-human rank "
                  "(median rank beside); the taus leave it out.", "",
                  "| measure | prediction | design | budget | variant | full-human rank | LLM-only rank | composite: "
                  f"within {WITHIN} (median rank) | composite, fitted slope: within {WITHIN} (median rank) | "
                  f"estimate: within {WITHIN} (median rank) | coverage mean / worst |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in gamed:
            lines.append(f"| {r['measure']} | {r['prediction']} | {r['design']} | {r['budget']:.0%} | {r['variant']} "
                         f"| {r['gamed_human_rank']} | {r['gamed_llm_rank']} | {r['gamed_composite_within']:.3f} "
                         f"({r['gamed_composite_rank_median']:.0f}) | {_gamed(r, '_fitted')} | "
                         f"{r['gamed_estimate_within']:.3f} "
                         f"({r['gamed_estimate_rank_median']:.0f}) | {r['coverage_mean']:.3f} / "
                         f"{r['coverage_worst']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def _gamed(row: dict[str, Any], suffix: str) -> str:
    key = f"gamed_composite{suffix}_within"
    return f"{row[key]:.3f} ({row[f'gamed_composite{suffix}_rank_median']:.0f})" if key in row else "-"


def _cells(rows: list[dict[str, Any]], budgets: list[float]) -> list[tuple[str, float, list[dict[str, Any]]]]:
    """(goal measure, budget, its rows) of every cell with rows, measure by measure, budget by budget."""
    cells = [(m, b, [r for r in rows if r["measure"] == m and r["budget"] == b]) for m in GOAL_MEASURES
             for b in budgets]
    return [c for c in cells if c[2]]


def headline(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The numbers README.md and docs/human_sample.md quote: per goal measure and budget, over every prediction and
    design, the lowest coverage, the worst tails and the estimates outside the range, the narrowest prediction's width
    ratio and its taus, for the workflow's default variant; then the gamed run's ranks."""
    default = meta.get("default_variant", DEFAULT_VARIANT)
    c = default_order_suffix()
    mine = [r for r in rows if r["variant"] == default and not r.get("gamed")]
    lines = [f"{repetitions(meta)}; {len(meta['predictions'])} predictions x {len(meta['designs'])} designs x "
             f"{len(meta['budgets'])} budgets; {meta['systems']} systems, {meta['pool']} pooled passages; estimates: "
             f"{default}. Tails: worst over predictions and designs.", "",
             "| measure | budget | lowest mean coverage | lowest worst-system coverage | p99 / max abs error | "
             "share of samples off by > 0.1 / > 0.5 | outside range | best prediction (width / human-only, design) | "
             "tau PPI | tau composite (the leaderboard's order) | tau LLM-only | tau human-only |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, b, sub in _cells(mine, meta["budgets"]):
        best = min(sub, key=lambda r: r["width_ratio"])
        lines.append(f"| {m} | {b:.0%} | {min(r['coverage_mean'] for r in sub):.3f} | "
                     f"{min(r['coverage_worst'] for r in sub):.3f} | "
                     f"{max(r['p99_abs_error'] for r in sub):.3f} / {max(r['max_abs_error'] for r in sub):.3f} | "
                     f"{max(r['share_off_0.1'] for r in sub):.3f} / {max(r['share_off_0.5'] for r in sub):.3f} | "
                     f"{max(r['outside_range'] for r in sub):.3f} | {best['prediction']} "
                     f"({best['width_ratio']:.2f}, {best['design']}) | {best['tau_ppi']:.3f} | "
                     f"{_tau(best, f'tau_composite{c}')} | {best['tau_llm']:.3f} | {best['tau_human']:.3f} |")
    gamed = [r for r in rows if r.get("gamed") and r["variant"] == default]
    if gamed:
        lines += ["", f"The gamed run (one per prediction; its rank within {WITHIN} of its full-human rank: share of "
                  "samples, lowest over predictions and designs; median ranks of the worst configuration):", "",
                  "| measure | budget | full-human rank | LLM-only rank (best for the gamer) | composite within "
                  f"{WITHIN} | estimate within {WITHIN} |", "|---|---|---|---|---|---|"]
        for m, b, sub in _cells(gamed, sorted({r["budget"] for r in gamed})):
            worst = min(sub, key=lambda r: r[f"gamed_composite{c}_within"])
            lines.append(f"| {m} | {b:.0%} | {min(r['gamed_human_rank'] for r in sub)}-"
                         f"{max(r['gamed_human_rank'] for r in sub)} | {min(r['gamed_llm_rank'] for r in sub)} | "
                         f"{worst[f'gamed_composite{c}_within']:.3f} (median rank "
                         f"{worst[f'gamed_composite{c}_rank_median']:.0f}) | "
                         f"{min(r['gamed_estimate_within'] for r in sub):.3f} |")
    return "\n".join(lines) + "\n"


def summary(rows: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """What docs/measurements.json keeps under ``human_sample``: the worst tails over the headline configurations at
    :data:`TAIL_BUDGET`, the lowest coverages at 5% and above, the taus' margins, the gamed run's share."""
    default = meta.get("default_variant", DEFAULT_VARIANT)
    c = default_order_suffix()
    mine = [r for r in rows if r["variant"] == default and not r.get("gamed")]
    out: dict[str, Any] = {"collection": meta["collection"], "reps": meta["reps"], "systems": meta["systems"],
                           "predictions": meta["predictions"], "designs": meta["designs"], "budgets": meta["budgets"],
                           "tail_budget": TAIL_BUDGET, "tail": {}, "coverage": {}, "tau": {}}
    for m in GOAL_MEASURES:
        at = [r for r in mine if r["measure"] == m and r["budget"] == TAIL_BUDGET]
        if at:
            out["tail"].update({f"{m}_share_off_0.5": max(r["share_off_0.5"] for r in at),
                                f"{m}_share_off_0.1": max(r["share_off_0.1"] for r in at),
                                f"{m}_p99_abs_error": round(max(r["p99_abs_error"] for r in at), 4),
                                f"{m}_max_abs_error": round(max(r["max_abs_error"] for r in at), 4),
                                f"{m}_p99_half_width": round(max(r["p99_half_width"] for r in at), 4)})
        goal = [r for r in mine if r["measure"] == m and r["budget"] >= 0.05]
        if goal:
            out["coverage"][m] = {"lowest_mean": round(min(r["coverage_mean"] for r in goal), 4),
                                  "lowest_worst_system": round(min(r["coverage_worst"] for r in goal), 4),
                                  "outside_range": max(r["outside_range"] for r in goal),
                                  "share_off_0.5": max(r["share_off_0.5"] for r in goal)}
            out["tau"][m] = {"composite_minus_human_min": round(min(r[f"tau_composite{c}"] - r["tau_human"]
                                                                    for r in mine if r["measure"] == m), 4),
                             "composite_minus_llm_min_10_20": round(min(
                                 (r[f"tau_composite{c}"] - r["tau_llm"] for r in goal if r["budget"] >= 0.10),
                                 default=float("nan")), 4)}
    gamed = [r for r in rows if r.get("gamed") and r["variant"] == default]
    if gamed:
        out["gamed"] = {m: {f"{b:g}": {"composite_within_min": round(min(r[f"gamed_composite{c}_within"]
                                                                         for r in sub), 4),
                                        "estimate_within_min": round(min(r["gamed_estimate_within"] for r in sub), 4),
                                        "human_rank": sorted({r["gamed_human_rank"] for r in sub}),
                                        "llm_rank": sorted({r["gamed_llm_rank"] for r in sub})}
                            for b in sorted({r["budget"] for r in gamed})
                            if (sub := [r for r in gamed if r["measure"] == m and r["budget"] == b])}
                        for m in GOAL_MEASURES if any(r["measure"] == m for r in gamed)}
    return out


STATE: dict[str, Any] = {}
"""What every worker process reads (set before the processes fork)."""


def run_config(job: tuple[str, str, float, tuple[str, ...], int, bool]) -> list[dict[str, Any]]:
    name, design, frac, ms, reps, with_gamed = job
    st = STATE
    chunk = st["chunk"] if not set(ms) & set(EXTRA_MEASURES) else max(1, st["chunk"] // 10)
    t1 = time.perf_counter()
    if with_gamed:
        ranked, truth, llm, weight_w = pool_with(st["col"], st["preds"][name], list(ms), f"gamed-{name}")
        gamed = ranked.systems.index(f"gamed-{name}")
    else:
        ranked, truth, llm, weight_w, gamed = st["ranked"], st["truth"], st["llm"][name], st["weight_w"], None
    rows = simulate(name, st["preds"][name], design, frac, list(ms), reps, chunk, ranked, st["col"].grades, truth,
                    llm, weight_w, st["variants"], gamed)
    c = default_order_suffix()
    for r in rows:
        extra = (f" gamed: human {r['gamed_human_rank']} llm {r['gamed_llm_rank']} composite within "
                 f"{r[f'gamed_composite{c}_within']:.3f}") if r.get("gamed") else ""
        print(f"{name[:14]:>14} {design:>13} {frac:4.0%} {r['measure']:>11} {r['variant']:>11}: cover "
              f"{r['coverage_mean']:.3f} worst {r['coverage_worst']:.3f} p99 {r['p99_abs_error']:.3f} max "
              f"{r['max_abs_error']:.3f} off>0.5 {r['share_off_0.5']:.3f} width {r['width_ratio']:.2f} tau "
              f"{r['tau_ppi']:.3f} composite {r[f'tau_composite{c}']:.3f} llm {r['tau_llm']:.3f} human "
              f"{r['tau_human']:.3f}{extra} ({time.perf_counter() - t1:.0f} s)", flush=True)
    return rows


def pool_with(col: Collection, probs: np.ndarray | None, measures: list[str], gamed: str | None = None
              ) -> tuple[Any, dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """(ranked pool, truth per measure, LLM-only values per measure of ``probs``, importance) of the collection's
    runs, with the gamed run of ``probs`` when ``gamed`` names it."""
    from autograde.metrics.estimable import estimable_measure
    from autograde.ppi.design import importance
    from autograde.ppi.measures import Linearized, gains_from_distribution, gains_from_grades
    from autograde.ppi.pool import ranked_pool

    runs = col.runs if gamed is None or probs is None else pd.concat([col.runs, gamed_run(col, probs, gamed)],
                                                                     ignore_index=True)
    ranked = ranked_pool(runs, col.keys)
    obs = gains_from_grades(col.grades, LEVELS, RELEVANT)
    truth = {m: Linearized(estimable_measure(m), ranked, obs, None).estimate[0] for m in measures}
    llm = {} if probs is None else {m: Linearized(estimable_measure(m), ranked,
                                                  gains_from_distribution(probs, LEVELS, RELEVANT),
                                                  None).estimate[0] for m in measures}
    return ranked, truth, llm, importance(ranked, 10)


def write_measurements(path: Path, data: dict[str, Any]) -> None:
    """``data`` under ``human_sample`` in the JSON file at ``path`` (the other keys kept)."""
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    old["human_sample"] = data
    path.write_text(json.dumps(old, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--qrels", default=str(DL20 / "qrels.dl20-passage.txt"), help="the truth (default: DL20's)")
    ap.add_argument("--runs", default=str(SYNTH / "runs"), help="a folder of run files (default: make dl20-synth's)")
    ap.add_argument("--prediction", action="append", default=[], metavar="NAME=KIND:PATH[:LEVEL]",
                    help="a prediction (repeat for several): qrels:PATH[:LEVEL], table:PATH or calibrated:DIR "
                         "(default: DL20's prompts, calibrated qrels and the embedded grader)")
    ap.add_argument("--predictions", default="", help="comma-separated subset of the predictions by name "
                    f"(default with DL20: {','.join(HEADLINE_PREDICTIONS)}; else all)")
    ap.add_argument("--reps", type=int, default=500, help="repetitions per configuration")
    ap.add_argument("--chunk", type=int, default=50, help="repetitions evaluated at once")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default: 2)")
    ap.add_argument("--out", default=str(REPO / "docs" / "generated"), help="folder of the generated files")
    ap.add_argument("--work", default=str(REPO / "work" / "human-sample-bench"), help="cache of predictions")
    ap.add_argument("--extra-reps", type=int, default=EXTRA["reps"], help="repetitions of the MAP and RR grid")
    ap.add_argument("--linear-reps", type=int, default=None,
                    help="repetitions of the linear goal measure (P_10, ~3x cheaper than nDCG@10; default: --reps)")
    ap.add_argument("--spread", default="adjusted", choices=["adjusted", "moment"],
                    help="how the composite estimates the spread A of the LLM's errors between systems: the adjusted "
                         "likelihood (the workflow's) or Fay and Herriot's moment equation (the estimator before it)")
    ap.add_argument("--variants", default=DEFAULT_VARIANT,
                    help=f"comma-separated estimators compared on the same samples (of {', '.join(VARIANTS)}; "
                         f"default: {DEFAULT_VARIANT}, the workflow's)")
    ap.add_argument("--measures", default=",".join(GOAL_MEASURES + EXTRA_MEASURES),
                    help="comma-separated subset of the measures (default: all)")
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated subset of the designs")
    ap.add_argument("--budgets", default=",".join(f"{b:g}" for b in BUDGETS),
                    help="comma-separated budgets (fractions of the pool)")
    ap.add_argument("--gamed-budgets", default=f"{TAIL_BUDGET:g}",
                    help="budgets at which the gamed run is added (comma-separated; empty: none)")
    ap.add_argument("--merge", default=None,
                    help="an earlier run's human_sample_simulation.json: keep its rows of every (measure, variant) "
                         "this run does not compute (same collection, predictions, designs, budgets)")
    ap.add_argument("--measurements", default=None,
                    help="a JSON file (docs/measurements.json) to write the worst tails and goals under human_sample")
    args = ap.parse_args(argv)
    import multiprocessing
    import os
    import platform

    from autograde.core.stats import t_quantile
    from autograde.ppi.intervals import bounded_interval

    variants = args.variants.split(",")
    budgets = [float(b) for b in args.budgets.split(",") if b]
    gamed_budgets = [float(b) for b in args.gamed_budgets.split(",") if b]
    chosen: dict[str, tuple[list[Any], list[Any]]] = {
        "variants": (variants, VARIANTS), "measures": (args.measures.split(","), GOAL_MEASURES + EXTRA_MEASURES),
        "designs": (args.designs.split(","), DESIGNS)}
    for option, (picked, known) in chosen.items():
        unknown = [str(x) for x in picked if x not in known]
        if unknown:
            sys.exit(f"--{option}: unknown {', '.join(unknown)} (choose among {', '.join(str(x) for x in known)})")
    if any(not 0 < b <= 1 for b in budgets + gamed_budgets):
        sys.exit("--budgets and --gamed-budgets are fractions of the pool in (0, 1]")
    goal = [m for m in GOAL_MEASURES if m in chosen["measures"][0]]
    extra = [m for m in EXTRA_MEASURES if m in chosen["measures"][0]]
    designs = [d for d in DESIGNS if d in chosen["designs"][0]]
    t0 = time.perf_counter()
    work = Path(args.work)
    qrels_path, runs_dir = Path(args.qrels), Path(args.runs)
    col = load(qrels_path, runs_dir)
    is_dl20 = qrels_path.resolve() == (DL20 / "qrels.dl20-passage.txt").resolve() and not args.prediction
    specs = [parse_prediction(p) for p in args.prediction] if args.prediction else default_predictions()
    subset = args.predictions.split(",") if args.predictions else (HEADLINE_PREDICTIONS if is_dl20 else None)
    preds = predictions(col, specs, qrels_path, work, subset)
    measures = goal + extra
    ranked, truth, _, weight_w = pool_with(col, None, measures)
    print(f"loaded pool {len(col.keys)}, {len(ranked.systems)} systems, {len(preds)} predictions in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    llm = {p: pool_with(col, pr, measures)[2] for p, pr in preds.items()}
    t_quantile(0.95, 2.0)  # import scipy.stats once, before the processes fork
    bounded_interval(np.zeros(1), np.ones(1), 3.0, 0.0, 1.0, 0.95)  # and the interval's table
    STATE.update(col=col, preds=preds, ranked=ranked, truth=truth, llm=llm, weight_w=weight_w, chunk=args.chunk,
                 variants=variants, spread=args.spread)
    linear_reps = args.reps if args.linear_reps is None else args.linear_reps
    reps_of = {m: linear_reps if m == "P_10" else args.reps for m in goal}
    groups = [tuple(m for m in goal if reps_of[m] == r) for r in sorted(set(reps_of.values()), reverse=True)]
    jobs = [(name, design, frac, group, reps_of[group[0]], False) for name in preds for design in designs
            for frac in budgets for group in groups]
    jobs += [(name, design, frac, tuple(goal), args.reps, True) for name in preds for design in designs
             for frac in gamed_budgets if goal]
    jobs += [(name, design, frac, tuple(extra), args.extra_reps, False) for name in EXTRA["predictions"]
             if name in preds and args.extra_reps > 0 and extra for design in EXTRA["designs"] if design in designs
             for frac in EXTRA["budgets"] if frac in budgets]
    jobs.sort(key=lambda j: -(j[4] * (20 if set(j[3]) & set(EXTRA_MEASURES) else 1)))  # the longest first
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            rows = [r for part in pool.imap_unordered(run_config, jobs) for r in part]
    else:
        rows = [r for job in jobs for r in run_config(job)]
    meta = {"collection": col.name, "runs": str(runs_dir.relative_to(REPO) if runs_dir.is_relative_to(REPO)
                                                else runs_dir),
            "reps": args.reps, "extra_reps": args.extra_reps, "spread": args.spread,
            "seconds": time.perf_counter() - t0,
            "pool": len(col.keys), "queries": len(ranked.queries), "systems": len(ranked.systems),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {args.jobs} processes",
            "budgets": budgets, "gamed_budgets": gamed_budgets, "designs": designs, "predictions": list(preds),
            "extra": EXTRA, "variants": variants,
            "default_variant": DEFAULT_VARIANT if DEFAULT_VARIANT in variants else variants[-1]}
    if args.merge:
        rows = merge_rows(Path(args.merge).resolve(), rows, meta)
        if DEFAULT_VARIANT in meta["variants"]:
            meta["default_variant"] = DEFAULT_VARIANT
    shown = [m for m in GOAL_MEASURES + EXTRA_MEASURES if any(r["measure"] == m for r in rows)]
    order = {k: i for i, k in enumerate((g, p, d, b, m, v) for g in (False, True) for m in shown for p in preds
                                        for d in designs for b in sorted(set(budgets) | set(gamed_budgets))
                                        for v in meta["variants"])}
    rows.sort(key=lambda r: order[(bool(r.get("gamed")), r["prediction"], r["design"], r["budget"], r["measure"],
                                   r["variant"])])
    reps_meta(rows, meta)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "human_sample_simulation.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / "human_sample_simulation.md").write_text(markdown(rows, meta))
    (out / "human_sample_headline.md").write_text(headline(rows, meta))
    default_rows = [r for r in rows if r["variant"] == meta["default_variant"] and not r.get("gamed")]
    (out / "human_sample_simulation.svg").write_text(svg_plot(default_rows, [p for p in preds][:4]))
    if args.measurements:
        write_measurements(Path(args.measurements), summary(rows, meta))
    print(headline(rows, meta))


if __name__ == "__main__":
    main()
