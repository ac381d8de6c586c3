"""Simulation of the human-sample estimates on DL20: how often the 95% intervals cover the full-human value, how
wide they are against the human-only interval, and how well each leaderboard ranks the systems.

    make dl20-synth                                              # the 59 synthetic runs (work/dl20-synth)
    .venv/bin/python benchmarks/human_sample.py                  # 500 repetitions, writes docs/generated/
    .venv/bin/python benchmarks/human_sample.py --reps 50 --out /tmp/sim   # a quick look
    .venv/bin/python benchmarks/human_sample.py --measures P_10 --predictions calibrated --designs stratified \
        --budgets 0.05 --variants tuned+floor --reps 1000 --out /tmp/sim  # one configuration, closely
    .venv/bin/python benchmarks/human_sample.py --measures ndcg_cut_10 --variants fixed,fixed+floor,tuned,tuned+floor \
        --reps 500 --merge docs/generated/human_sample_simulation.json  # more repetitions of some rows, others kept

Truth: the official DL20 qrels over the judged pool (11,386 passages of 54 queries; a passage outside it counts
as not relevant, as trec_eval counts it). Systems: the 59 synthetic runs of ``make dl20-synth`` (every judged
passage is in every run; better runs rank relevant ones higher). Predictions (each mapped to the 0-3 scale a
priori, from its prompt's scale, never tuned here): the eight released FLAN-T5 prompt qrels (binary prompts and
Thomas: a label >= 1 predicts grade 2; the 0-5 self-ratings: >= 4 predicts grade 2), calibrated qrels (logistic
regression over the eight, cross-validated by query: each query's distribution comes from a model fitted on the
other folds' judgments, standing in for a model fitted on another collection), and the embedded grader
(all-MiniLM-L6-v2 of the query against the passage; DL20's passage texts cannot be redistributed, so every judged
passage gets random words as in the synthetic corpus: an uninformative prediction, on purpose).

Designs at each budget (2, 5, 10, 20% of the pool, as expected sizes): ``simple_random`` (one round);
``stratified`` and ``active``: a simple random pilot of half the budget, then the design with the other half using
the pilot (the two rounds combined with weights 1/2, as ``autograde sample draw`` twice does). Each configuration
runs ``--reps`` repetitions with its own seed (P@10, ~3x cheaper per repetition: ``--linear-reps``, whose first
``--reps`` are the same samples); the measures are P@10 and nDCG@10 (the goals) for every
prediction, design and budget, MAP and RR on the smaller grid of :data:`EXTRA` (coverage only; their full-depth
rankings make them much costlier). Configurations run in ``--jobs`` processes. Every estimator of :data:`VARIANTS`
(``--variants``) runs on the same samples (``--merge``: the rows of the variants and measures not run come from an
earlier run's JSON; with the same predictions, designs, budgets and ``--chunk`` they equal a rerun, the first
repetitions being the same samples). Per configuration and variant: coverage of the 95% intervals (mean
over systems, and the worst system), the median ratio of the interval's width to the human-only interval's on
the same sample, and Kendall's tau of the prediction-powered, LLM-only and human-only leaderboards against the
full-human one (mean over repetitions).

Writes ``human_sample_simulation.md`` (the tables), ``human_sample_headline.md`` (the lines README.md and
docs/human_sample.md quote), ``.json`` (every number; README.md and docs/human_sample.md
quote it, a test checks the quotes) and ``.svg`` (coverage and width against the budget) under ``--out``.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
import time
import zlib
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
EXTRA: dict[str, Any] = {"predictions": ["calibrated", "Sun"], "designs": ["simple_random", "active"], "budgets": [0.10, 0.20],
         "reps": 200}
"""MAP and RR (coverage shown, no goal) on a smaller grid: a full-depth ranking makes them ~20x costlier."""
PROMPT_LEVEL = {"FagB": 1, "FagB_few": 1, "HELM": 1, "Sun": 1, "Sun_few": 1, "Thomas": 1,
                "NuggetSelfRatedPrompt": 4, "QuestionSelfRatedUnanswerablePromptWithChoices": 4}
"""A label >= this predicts the human relevance level (binary prompts and Thomas' 0-2 scale: 1; 0-5 self-ratings:
4, the workbench's default threshold)."""


def load(work: Path) -> tuple[list[tuple[str, str]], np.ndarray, Any, dict[str, str]]:
    """(pool keys, true grades, ranked pool, query texts)."""
    from autograde.core.errors import Problems
    from autograde.io.run_table import read_run_table
    from autograde.io.trec import read_qrels
    from autograde.ppi.pool import pool_order, ranked_pool

    qrels = read_qrels(DL20 / "qrels.dl20-passage.txt")
    keys = pool_order([(q, d) for q, docs in qrels.items() for d in docs])
    grades = np.array([qrels[q][d] for q, d in keys], dtype=np.float64)
    files = sorted(glob.glob(str(SYNTH / "runs" / "*.run")))
    if len(files) != 59:
        sys.exit(f"{SYNTH}/runs has {len(files)} runs, expected 59: run make dl20-synth first")
    probs = Problems()
    runs = pd.concat([read_run_table(f, probs) for f in files], ignore_index=True)
    probs.raise_if_any()
    ranked = ranked_pool(runs[["run", "query_id", "passage_id", "score"]], keys)
    queries = json.loads((DL20 / "dl20-queries.json").read_text())
    return keys, grades, ranked, queries


def point(labels: np.ndarray, level: float) -> np.ndarray:
    from autograde.ppi.predictions import grade_distribution, on_human_scale

    return grade_distribution(on_human_scale(labels, (level, RELEVANT), None), LEVELS)


def predictions(keys: list[tuple[str, str]], queries: dict[str, str], work: Path,
                chosen: list[str] | None = None) -> dict[str, np.ndarray]:
    """Every prediction (or only those ``chosen``: the others are not computed)."""
    from autograde.io.trec import read_qrels

    def wanted(name: str) -> bool:
        return not chosen or name in chosen

    out: dict[str, np.ndarray] = {}
    for name, level in PROMPT_LEVEL.items():
        if wanted(name):
            q = read_qrels(DL20 / "autograded-qrels" / f"{name}.qrel")
            out[name] = point(np.array([q.get(a, {}).get(b, -1) for a, b in keys], dtype=np.float64), level)
    if wanted("calibrated"):
        out["calibrated"] = calibrated(keys, work)
    if wanted("embedded"):
        out["embedded"] = point(embedded(keys, queries, work), 4)
    return out


def calibrated(keys: list[tuple[str, str]], work: Path) -> np.ndarray:
    path = work / "calibrated.parquet"
    if not path.is_file():
        from autograde.calibrated.cv import cross_validate_qrels
        from autograde.calibrated.features import features_from_sources
        from autograde.config.rubric import CalibratedQrelsConfig
        from autograde.io.trec import read_qrels

        sources = sorted(str(p) for p in (DL20 / "autograded-qrels").glob("*.qrel"))
        cfg = CalibratedQrelsConfig.model_validate({"sources": sources, "judgments": str(DL20 / "qrels.dl20-passage.txt"),
                                                    "estimators": ["logistic"], "logistic_c": [0.1, 1.0]})
        _, _, table = cross_validate_qrels(cfg, features_from_sources(sources, cfg), read_qrels(cfg.judgments))
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path)
    t = pd.read_parquet(path).astype({"query_id": str, "passage_id": str}).set_index(["query_id", "passage_id"])
    return t.loc[keys, [f"p_level_{v}" for v in LEVELS]].to_numpy(dtype=np.float64)


def embedded(keys: list[tuple[str, str]], queries: dict[str, str], work: Path) -> np.ndarray:
    """The embedded grader's grade (0-5) of each judged passage against its query, on random texts."""
    path = work / "embedded.npy"
    if not path.is_file():
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
            "system-all+floor", "legacy", "legacy+floor"]
"""How the estimates are made: ``fixed``: plain prediction-powered (lam = 1, the estimator before power tuning);
``tuned``: the workflow's default power tuning (one cross-fitted weight per linear measure for the leaderboard,
lam = 1 for nDCG, MAP, RR); ``tuned-all``: the same weight for the nonlinear measures too (fitted on the whole
sample); ``system-all``: one weight per system, every measure; ``+floor``: the one-error variance floor (on the
human-only baseline too, so widths compare like with like). ``tuned+floor`` is the workflow's default."""
DEFAULT_VARIANT = "tuned+floor"
POWER = {"fixed": "none", "tuned-all": "leaderboard", "system-all": "system"}


def simulate(name: str, probs: np.ndarray, design: str, frac: float, measures: list[str], reps: int, chunk: int,
             ranked: Any, grades: np.ndarray, truth: dict[str, np.ndarray], llm: dict[str, dict[str, np.ndarray]],
             weight_w: np.ndarray, variants: list[str]) -> list[dict[str, Any]]:
    from autograde.core.stats import kendall_matrix, t_quantile
    from autograde.metrics.estimable import estimable_measure
    from autograde.ppi.composite import fay_herriot
    from autograde.ppi.estimators import estimate_measures, zero_gains
    from autograde.ppi.measures import gains_from_distribution, gains_from_grades

    pred = gains_from_distribution(probs, LEVELS, RELEVANT)
    zero = zero_gains(pred)
    obs = gains_from_grades(grades, LEVELS, RELEVANT)
    seed = zlib.crc32(f"{name}/{design}/{frac}".encode())
    rng = np.random.default_rng(seed)
    def base(v: str) -> tuple[str, bool]:  # (power, coherent ratio estimator)
        b = v.split("+")[0]
        return ("tuned", False) if b == "legacy" else (b, True)

    def power_of(v: str, linear: bool) -> tuple[str, bool]:  # the estimate_measures call a variant reads
        b, c = base(v)
        if b == "tuned":  # the default: linear measures tuned, the others plain
            b = "tuned-all" if linear else "fixed"
        return b, c or linear  # the ratio estimator's choice changes no linear measure

    lin = [estimable_measure(m).linear for m in measures]
    powers = sorted({power_of(v, x) for v in variants for x in lin})
    coherents = sorted({c for _, c in powers})

    def interval(e: Any, floor: bool) -> tuple[np.ndarray, np.ndarray]:
        v, df = (e.variance, e.df) if floor else (e.raw_variance, e.raw_df)
        half = t_quantile(0.95, df) * np.sqrt(np.maximum(v, 0.0))
        return e.estimate - half, e.estimate + half

    keys = ("cover", "hcover", "ratio", "tau", "ctau", "ctauf", "htau", "size", "lam", "floored")
    acc: dict[tuple[str, str], dict[str, list[Any]]] = {(m, v): {k: [] for k in keys} for m in measures
                                                          for v in variants}
    for start in range(0, reps, chunk):
        b = min(chunk, reps - start)
        rounds = rounds_for(design, frac, b, rng, grades, probs, weight_w)
        size = (rounds[-1].sampled.sum(axis=1)).astype(np.float64)
        meas = [estimable_measure(m) for m in measures]
        ppi = {(p, c): estimate_measures(meas, ranked, pred, obs, rounds, keep_residuals=False, power_tuning=POWER[p],
                                         variance_floor=True, tune_nonlinear=True, coherent_ratio=c)
               for p, c in powers}
        hums = {c: estimate_measures(meas, ranked, zero, obs, rounds, keep_residuals=False, variance_floor=True,
                                     coherent_ratio=c) for c in coherents}
        for m in measures:
            t = truth[m]
            for v in variants:
                key, floor = power_of(v, estimable_measure(m).linear), v.endswith("+floor")
                e, h = ppi[key][m], hums[key[1]][m]
                lo, hi = interval(e, floor)
                hlo, hhi = interval(h, floor)
                a = acc[(m, v)]
                a["cover"].append((lo <= t) & (t <= hi))
                a["hcover"].append((hlo <= t) & (t <= hhi))
                with np.errstate(divide="ignore", invalid="ignore"):
                    a["ratio"].append(((hi - lo) / (hhi - hlo)).ravel())
                a["tau"].append(kendall_matrix(e.estimate, t))
                psi = np.asarray(e.variance if floor else e.raw_variance)
                a["ctau"].append(kendall_matrix(fay_herriot(e.estimate, psi, llm[m][name], "one").estimate, t))
                a["ctauf"].append(kendall_matrix(fay_herriot(e.estimate, psi, llm[m][name], "fitted").estimate, t))
                a["htau"].append(kendall_matrix(h.estimate, t))
                a["size"].append(size)
                lam = np.asarray(e.lam)  # always set by estimate_measures
                a["lam"].append(lam.ravel())
                a["floored"].append(e.floored.ravel() if floor and e.floored is not None else np.zeros(lam.size))
    rows = []
    for m in measures:
        for v in variants:
            a = acc[(m, v)]
            cover = np.concatenate(a["cover"]).mean(axis=0)
            hcover = np.concatenate(a["hcover"]).mean(axis=0)
            ratio = np.concatenate(a["ratio"])
            fin = ratio[np.isfinite(ratio)]
            rows.append({"prediction": name, "design": design, "budget": frac, "measure": m, "variant": v,
                         "reps": reps, "judged": float(np.concatenate(a["size"]).mean()),
                         "coverage_mean": float(cover.mean()), "coverage_worst": float(cover.min()),
                         "human_coverage_mean": float(hcover.mean()), "human_coverage_worst": float(hcover.min()),
                         "width_ratio": float(np.nanmedian(fin)),
                         "wider_than_human": float((fin > 1.0 + 1e-9).mean()),
                         "lambda_mean": float(np.concatenate(a["lam"]).mean()),
                         "floored": float(np.concatenate(a["floored"]).mean()),
                         "tau_ppi": float(np.nanmean(np.concatenate(a["tau"]))),
                         "tau_llm": float(kendall_matrix(llm[m][name][None], truth[m])[0]),
                         "tau_composite": float(np.nanmean(np.concatenate(a["ctau"]))),
                         "tau_composite_fitted": float(np.nanmean(np.concatenate(a["ctauf"]))),
                         "tau_human": float(np.nanmean(np.concatenate(a["htau"])))})
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
                       and r["measure"] == m]
                if pts:
                    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                    parts.append(f'<polyline points="{path}" fill="none" stroke="{colors[d]}" stroke-width="1.5" '
                                 f'stroke-dasharray="{dashes.get(p, "")}"/>')
    ly = 2 * h + 50
    for i, d in enumerate(DESIGNS):
        parts.append(f'<line x1="{20 + i * 120}" y1="{ly}" x2="{45 + i * 120}" y2="{ly}" stroke="{colors[d]}" stroke-width="2"/>'
                     f'<text x="{50 + i * 120}" y="{ly + 4}">{d}</text>')
    for i, p in enumerate(predictions):
        parts.append(f'<line x1="{380 + i * 130}" y1="{ly}" x2="{405 + i * 130}" y2="{ly}" stroke="black" '
                     f'stroke-dasharray="{dashes.get(p, "")}"/><text x="{410 + i * 130}" y="{ly + 4}">{p}</text>')
    parts.append(f'<text x="20" y="{ly + 22}">orange dashes: the goals (coverage 0.93; width 0.7 at 10%)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def repetitions(meta: dict[str, Any]) -> str:
    """``N repetitions per configuration``, or the repetitions of each goal measure when they differ (and of the
    variants that a merged run gave fewer: ``--merge``)."""
    by = meta.get("reps_by_measure")
    if not by:
        return f"{meta['reps']} repetitions per configuration"
    fewer: dict[str, dict[str, int]] = meta.get("fewer_variant_reps", {})

    def few(m: str) -> str:
        if m not in fewer:
            return ""
        parts = []
        for n in sorted(set(fewer[m].values()), reverse=True):
            vs = [v for v in VARIANTS if fewer[m].get(v) == n]
            parts.append(f"{n} for " + ", ".join(v + "(+floor)" if v + "+floor" in vs else v for v in vs
                                                  if not (v.endswith("+floor") and v[:-6] in vs)))
        return "; " + "; ".join(parts)

    return "repetitions per configuration: " + ", ".join(f"{r} ({m}{few(m)})" for m, r in by.items())


def merge_rows(path: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """``rows`` and the rows of the earlier run at ``path`` (its JSON) of every (measure, variant) this run did not
    compute; the two runs must have the same predictions, designs and budgets (the seeds then give the same
    samples). Updates ``meta`` (the variants, the earlier run's seconds)."""
    old = json.loads(path.read_text(encoding="utf-8"))
    for key in ("predictions", "designs", "budgets"):
        if old["meta"][key] != meta[key]:
            sys.exit(f"--merge {path}: its {key} {old['meta'][key]} differ from this run's {meta[key]}; rerun with "
                     "the same --predictions, --designs and --budgets")
    done = {(r["measure"], r["variant"]) for r in rows}
    kept = [r for r in old["rows"] if (r["measure"], r.get("variant", "fixed")) not in done]
    variants = [v for v in VARIANTS if v in set(meta["variants"]) | set(old["meta"]["variants"])]
    meta.update(variants=variants, merged={"from": str(path.relative_to(REPO) if path.is_relative_to(REPO) else path),
                                           "seconds": old["meta"]["seconds"], "rows": len(kept)})
    if any(r["measure"] in EXTRA_MEASURES for r in kept):
        meta["extra_reps"] = old["meta"]["extra_reps"]
    return rows + kept


def reps_meta(rows: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """``reps_by_measure`` (the default variant's repetitions of each goal measure, when they differ or a variant
    has fewer) and ``fewer_variant_reps`` (per measure, the variants with fewer repetitions than the default)."""
    default = meta["default_variant"]
    by = {m: max(r["reps"] for r in rows if r["measure"] == m and r["variant"] == default)
          for m in GOAL_MEASURES if any(r["measure"] == m and r["variant"] == default for r in rows)}
    fewer: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["measure"] in by and r["reps"] < by[r["measure"]]:
            fewer.setdefault(r["measure"], {})[r["variant"]] = r["reps"]
    if len(set(by.values())) > 1 or fewer:
        meta["reps_by_measure"] = by
    if fewer:
        meta["fewer_variant_reps"] = fewer


def merged_note(meta: dict[str, Any]) -> str:
    m = meta.get("merged")
    return f"; {m['rows']} rows kept from the earlier run {m['from']}, {m['seconds']:.0f} s" if m else ""


def _tau(row: dict[str, Any], key: str) -> str:
    return f"{row[key]:.3f}" if key in row else "-"


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = ["# Human-sample estimates on DL20: a simulation", "",
             f"Generated by `benchmarks/human_sample.py` ({repetitions(meta)}, "
             f"{meta['seconds']:.0f} s on {meta['machine']}{merged_note(meta)}). "
             "Truth: the official qrels over the judged pool "
             f"({meta['pool']} passages, {meta['queries']} queries); {meta['systems']} synthetic runs. Coverage of the "
             "95% intervals (mean over systems / worst system), the median width relative to the human-only "
             "interval on the same sample, and Kendall's tau against the full-human leaderboard (prediction-powered, "
             "the composite order of the leaderboard with a slope of one and with a fitted slope, LLM-only, "
             "human-only; mean over repetitions; - where the run did not compute it). See docs/human_sample.md for "
             "the estimators.", ""]
    for m in GOAL_MEASURES + EXTRA_MEASURES:
        sub = [r for r in rows if r["measure"] == m]
        if not sub:
            continue
        lines += [f"## {m}", "", "| prediction | design | budget | variant | judged | coverage mean | coverage worst | "
                  "human-only coverage mean / worst | width / human | wider than human | mean lambda | floored | "
                  "tau PPI | tau composite | tau composite (fitted slope) | tau LLM | tau human |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sub:
            lines.append(f"| {r['prediction']} | {r['design']} | {r['budget']:.0%} | {r.get('variant', 'fixed')} | "
                         f"{r['judged']:.0f} | "
                         f"{r['coverage_mean']:.3f} | {r['coverage_worst']:.3f} | "
                         f"{r['human_coverage_mean']:.3f} / {r['human_coverage_worst']:.3f} | {r['width_ratio']:.2f} | "
                         f"{r.get('wider_than_human', float('nan')):.3f} | {r.get('lambda_mean', 1.0):.2f} | "
                         f"{r.get('floored', 0.0):.3f} | "
                         f"{r['tau_ppi']:.3f} | {_tau(r, 'tau_composite')} | {_tau(r, 'tau_composite_fitted')} | "
                         f"{r['tau_llm']:.3f} | {r['tau_human']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def headline(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The numbers README.md and docs/human_sample.md quote: per goal measure, the worst coverage over every
    prediction and design at each budget, and the best prediction's width ratio and taus, for the workflow's
    default variant; beside them the same prediction and design with plain prediction-powered estimates (lam = 1, no
    floor) when the run had that variant."""
    default = meta.get("default_variant", DEFAULT_VARIANT)
    plain = {(r["prediction"], r["design"], r["budget"], r["measure"]): r for r in rows
             if r.get("variant", "fixed") == "fixed"}
    mine = [r for r in rows if r.get("variant", "fixed") == default]
    lines = [f"{repetitions(meta)}; {len(meta['predictions'])} predictions x "
             f"{len(meta['designs'])} designs x {len(meta['budgets'])} budgets; {meta['systems']} systems, "
             f"{meta['pool']} pooled passages; estimates: {default} (plain: lam = 1, no floor).", "",
             "| measure | budget | lowest mean coverage | lowest worst-system coverage | best prediction (width / "
             "human-only, design) | plain width | tau PPI | tau plain | tau composite (the leaderboard's order) | "
             "tau LLM-only | tau human-only |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in GOAL_MEASURES:
        for b in meta["budgets"]:
            sub = [r for r in mine if r["measure"] == m and r["budget"] == b]
            if not sub:
                continue
            best = min(sub, key=lambda r: r["width_ratio"])
            p = plain.get((best["prediction"], best["design"], b, m))
            pw, pt = (f"{p['width_ratio']:.2f}", f"{p['tau_ppi']:.3f}") if p else ("-", "-")
            lines.append(f"| {m} | {b:.0%} | {min(r['coverage_mean'] for r in sub):.3f} | "
                         f"{min(r['coverage_worst'] for r in sub):.3f} | {best['prediction']} "
                         f"({best['width_ratio']:.2f}, {best['design']}) | {pw} | {best['tau_ppi']:.3f} | {pt} | "
                         f"{_tau(best, 'tau_composite')} | {best['tau_llm']:.3f} | {best['tau_human']:.3f} |")
    return "\n".join(lines) + "\n"


STATE: dict[str, Any] = {}
"""What every worker process reads (set before the processes fork)."""


def run_config(job: tuple[str, str, float, tuple[str, ...], int]) -> list[dict[str, Any]]:
    name, design, frac, ms, reps = job
    st = STATE
    chunk = st["chunk"] if not set(ms) & set(EXTRA_MEASURES) else max(1, st["chunk"] // 10)
    t1 = time.perf_counter()
    rows = simulate(name, st["preds"][name], design, frac, list(ms), reps, chunk, st["ranked"], st["grades"],
                    st["truth"], st["llm"], st["weight_w"], st["variants"])
    for r in rows:
        print(f"{name[:14]:>14} {design:>13} {frac:4.0%} {r['measure']:>11} {r['variant']:>11}: cover {r['coverage_mean']:.3f} "
              f"worst {r['coverage_worst']:.3f} human cover {r['human_coverage_mean']:.3f} width {r['width_ratio']:.2f} tau {r['tau_ppi']:.3f} "
              f"composite {r['tau_composite']:.3f} llm {r['tau_llm']:.3f} human {r['tau_human']:.3f} ({time.perf_counter() - t1:.0f} s)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=500, help="repetitions per configuration")
    ap.add_argument("--chunk", type=int, default=50, help="repetitions evaluated at once")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default: 2)")
    ap.add_argument("--out", default=str(REPO / "docs" / "generated"), help="folder of the generated files")
    ap.add_argument("--work", default=str(REPO / "work" / "human-sample-bench"), help="cache of predictions")
    ap.add_argument("--predictions", default="", help="comma-separated subset of the predictions (default: all)")
    ap.add_argument("--extra-reps", type=int, default=EXTRA["reps"], help="repetitions of the MAP and RR grid")
    ap.add_argument("--linear-reps", type=int, default=None,
                    help="repetitions of the linear goal measure (P_10: about 3x cheaper per repetition than "
                         "nDCG@10; the first --reps of them are the nDCG runs' samples; default: --reps)")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help=f"comma-separated estimators to compare on the same samples (of {', '.join(VARIANTS)})")
    ap.add_argument("--measures", default=",".join(GOAL_MEASURES + EXTRA_MEASURES),
                    help="comma-separated subset of the measures (a quick look at one; default: all)")
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated subset of the designs")
    ap.add_argument("--budgets", default=",".join(f"{b:g}" for b in BUDGETS),
                    help="comma-separated subset of the budgets (fractions of the pool)")
    ap.add_argument("--merge", default=None,
                    help="an earlier run's human_sample_simulation.json: keep its rows of every (measure, variant) "
                         "this run does not compute (same predictions, designs, budgets: the seeds give the same "
                         "samples, so they equal a rerun); e.g. more repetitions of one measure's default variant")
    args = ap.parse_args()
    import multiprocessing
    import os
    import platform

    from autograde.core.stats import t_quantile
    from autograde.metrics.estimable import estimable_measure
    from autograde.ppi.design import importance
    from autograde.ppi.measures import Linearized, gains_from_distribution, gains_from_grades

    chosen: dict[str, tuple[list[Any], list[Any]]] = {
        "variants": (args.variants.split(","), VARIANTS),
        "measures": (args.measures.split(","), GOAL_MEASURES + EXTRA_MEASURES),
        "designs": (args.designs.split(","), DESIGNS),
        "budgets": ([float(b) for b in args.budgets.split(",")], BUDGETS)}
    for option, (picked, known) in chosen.items():
        unknown = [str(x) for x in picked if x not in known]
        if unknown:
            sys.exit(f"--{option}: unknown {', '.join(unknown)} (choose among {', '.join(str(x) for x in known)})")
    goal = [m for m in GOAL_MEASURES if m in chosen["measures"][0]]
    extra = [m for m in EXTRA_MEASURES if m in chosen["measures"][0]]
    designs = [d for d in DESIGNS if d in chosen["designs"][0]]
    budgets = [b for b in BUDGETS if b in chosen["budgets"][0]]
    t0 = time.perf_counter()
    work = Path(args.work)
    keys, grades, ranked, queries = load(work)
    preds = predictions(keys, queries, work, args.predictions.split(",") if args.predictions else None)
    print(f"loaded pool {len(keys)}, {len(ranked.systems)} systems, {len(preds)} predictions in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    obs = gains_from_grades(grades, LEVELS, RELEVANT)
    measures = goal + extra
    truth = {m: Linearized(estimable_measure(m), ranked, obs, None).estimate[0] for m in measures}
    llm = {m: {p: Linearized(estimable_measure(m), ranked, gains_from_distribution(pr, LEVELS, RELEVANT),
                             None).estimate[0] for p, pr in preds.items()} for m in measures}  # LLM-only values
    t_quantile(0.95, 2.0)  # import scipy.stats once, before the processes fork
    STATE.update(preds=preds, ranked=ranked, grades=grades, truth=truth, llm=llm, weight_w=importance(ranked, 10),
                 chunk=args.chunk, variants=args.variants.split(","))
    linear_reps = args.reps if args.linear_reps is None else args.linear_reps
    reps_of = {m: linear_reps if estimable_measure(m).linear else args.reps for m in goal}
    groups = [tuple(m for m in goal if reps_of[m] == r) for r in sorted(set(reps_of.values()), reverse=True)]
    jobs = [(name, design, frac, group, reps_of[group[0]]) for name in preds for design in designs
            for frac in budgets for group in groups]
    jobs += [(name, design, frac, tuple(extra), args.extra_reps) for name in EXTRA["predictions"]
             if name in preds and args.extra_reps > 0 and extra for design in EXTRA["designs"] if design in designs
             for frac in EXTRA["budgets"] if frac in budgets]
    jobs.sort(key=lambda j: -(j[4] * (20 if set(j[3]) & set(EXTRA_MEASURES) else 1)))  # the longest first
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        rows = [r for part in pool.imap_unordered(run_config, jobs) for r in part]
    variants = args.variants.split(",")
    meta = {"reps": args.reps, "extra_reps": args.extra_reps, "seconds": time.perf_counter() - t0,
            "pool": len(keys), "queries": len(ranked.queries), "systems": len(ranked.systems),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {args.jobs} processes",
            "budgets": budgets, "designs": designs, "predictions": list(preds), "extra": EXTRA,
            "variants": variants,
            "default_variant": DEFAULT_VARIANT if DEFAULT_VARIANT in variants else variants[-1]}
    if args.merge:
        rows = merge_rows(Path(args.merge).resolve(), rows, meta)
        if DEFAULT_VARIANT in meta["variants"]:  # the default's rows may be the earlier run's
            meta["default_variant"] = DEFAULT_VARIANT
    shown_measures = [m for m in GOAL_MEASURES + EXTRA_MEASURES if any(r["measure"] == m for r in rows)]
    order = {k: i for i, k in enumerate((p, d, b, m, v) for m in shown_measures for p in preds for d in designs
                                        for b in budgets for v in meta["variants"])}
    rows.sort(key=lambda r: order[(r["prediction"], r["design"], r["budget"], r["measure"], r["variant"])])
    reps_meta(rows, meta)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "human_sample_simulation.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / "human_sample_simulation.md").write_text(markdown(rows, meta))
    (out / "human_sample_headline.md").write_text(headline(rows, meta))
    shown: list[str] = [p for p in ("calibrated", "Sun", "embedded") if p in preds]
    default_rows = [r for r in rows if r["variant"] == meta["default_variant"]]
    (out / "human_sample_simulation.svg").write_text(svg_plot(default_rows, shown))
    print(markdown(rows, meta))


if __name__ == "__main__":
    main()
