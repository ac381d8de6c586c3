"""Benchmark of calibrated qrels on DL20: the deployed model (the mean of the candidates) against every estimator
kind alone, over seeds.

    .venv/bin/python benchmarks/rubric_calibrated.py                 # seeds 0-4, default estimators
    .venv/bin/python benchmarks/rubric_calibrated.py --seeds 1       # seed 0 only
    .venv/bin/python benchmarks/rubric_calibrated.py --processes 5   # the seeds in parallel processes

The eight released DL20 prompt qrels are the sources, the official qrels (level >= 2 relevant) the judgments.
Per seed: 5-fold cross-validation grouped by query (``autograde rubric calibrate-qrels cross-validate``: every
candidate kind alone and the deployed model, binary kappa of the pooled held-out labels), and the model fitted on
every judgment (``calibrate-qrels fit``), whose labels of DL20's own judged passages are compared with the judged
level shares. For seed 0 every fold's model is saved and applied to the held-out queries' sources by
``autograde rubric calibrate-qrels apply`` in a fresh process, whose labels must equal the cross-validation's. The
fit time of the default model is measured against plain logistic regression's (the baseline) in the same run, one
after the other after the seeds (also when the seeds ran in parallel processes).

Writes ``calibrated_qrels_dl20.md`` under ``--out`` (default docs/generated/), which docs/rubric.md
quotes (a test checks the quote).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
DL20 = REPO.parent / "shared" / "data" / "dl20"

from autograde.calibrated.cv import SELECTED, cross_validate_qrels, query_folds, share_ratio  # noqa: E402
from autograde.calibrated.features import RelevanceFeatures, features_from_sources  # noqa: E402
from autograde.calibrated.fit import fit_calibrated  # noqa: E402
from autograde.calibrated.report import cv_markdown  # noqa: E402
from autograde.config.rubric import CalibratedQrelsConfig  # noqa: E402
from autograde.io.trec import Qrels, read_qrels, write_qrels  # noqa: E402

SINGLE = "best single source (chosen on training folds)"


def _apply_check(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, judgments: Qrels, labels: Qrels,
                 models: str, sources: list[str]) -> int:
    """Folds whose saved model, applied in a fresh process to the held-out queries' sources, gives the labels of
    the cross-validation."""
    fold_of = query_folds(features, judgments, cfg.folds, cfg.seed)
    same = 0
    for f in range(cfg.folds):
        held = Path(models) / f"sources-{f}"
        held.mkdir()
        for s in sources:
            write_qrels(held / Path(s).name, {q: d for q, d in read_qrels(s).items() if fold_of[q] == f})
        args = [a for s in sources for a in ("--source", str(held / Path(s).name))]
        run = subprocess.run([sys.executable, "-m", "autograde.cli", "rubric", "calibrate-qrels", "apply",
                              "--model", f"{models}/fold-{f}", *args, "--out", f"{models}/applied-{f}.qrels",
                              "--threads", "1", "--quiet"], capture_output=True, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")})
        assert run.returncode == 0, run.stderr[-2000:]
        same += read_qrels(f"{models}/applied-{f}.qrels") == {q: d for q, d in labels.items() if fold_of[q] == f}
    return same


def _seed(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, judgments: Qrels, sources: list[str],
          check_apply: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        labels, report, _ = cross_validate_qrels(cfg, features, judgments, models_dir=tmp if check_apply else None)
        t_cv = time.perf_counter() - t0
        applied = _apply_check(cfg, features, judgments, labels, tmp, sources) if check_apply else None
    model = fit_calibrated(cfg, features, judgments).model
    training = model.info["training"]["label_shares"]
    return {"seed": cfg.seed, "report": report, "cv_seconds": t_cv, "applied": applied,
            "selected": next(r["estimator"] for r in model.info["selection"] if r.get("selected")),
            "training_shares": training, "training_ratio": share_ratio(training["deployed"], training["judged"]),
            "held_out_ratio": report["share_ratios"]["held_out"]}


def _band(ratios: dict[str, float]) -> str:
    return f"{min(ratios.values()):.2f} .. {max(ratios.values()):.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0 .. n-1 (default 5)")
    ap.add_argument("--out", default=str(REPO / "docs" / "generated"), help="folder of the outputs")
    ap.add_argument("--processes", type=int, default=1, help="seeds run in this many processes (default 1)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    sources = sorted(glob.glob(str(DL20 / "autograded-qrels" / "*.qrel")))
    if len(sources) != 8:
        print(f"reference data missing: {DL20} (the benchmark needs ../shared/data beside the checkout)")
        return 1
    base = {"sources": sources, "judgments": str(DL20 / "qrels.dl20-passage.txt")}
    cfg0 = CalibratedQrelsConfig.model_validate(base)
    features = features_from_sources(sources, cfg0)
    judgments = read_qrels(cfg0.judgments)
    jobs = [(cfg0.model_copy(update={"seed": seed}), features, judgments, sources, seed == 0)
            for seed in range(args.seeds)]
    if args.processes > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("fork"),
                                 initializer=torch.set_num_threads, initargs=(1,)) as pool:
            runs = list(pool.map(_seed, *zip(*jobs, strict=True)))
    else:
        runs = [_seed(*job) for job in jobs]
    for r in runs:
        print(f"seed {r['seed']}: selected kappa {r['report']['overall']['kappa']:.4f} ({r['cv_seconds']:.0f} s)",
              file=sys.stderr)
    t0 = time.perf_counter()  # the two timed fits one after the other, after the seeds
    fit_calibrated(cfg0, features, judgments)
    t_fit = time.perf_counter() - t0
    logistic = cfg0.model_copy(update={"estimators": ["logistic"]})
    t0 = time.perf_counter()
    fit_calibrated(logistic, features, judgments)
    t_logistic = time.perf_counter() - t0
    kinds = [n for n in runs[0]["report"]["overall"]["per_estimator"] if not n.endswith("(single source)")
             and n not in (SELECTED, SINGLE)]
    lines = [f"## Calibrated qrels on DL20: the selected model against every estimator kind alone, seeds 0-{args.seeds - 1}",
             "", f"{runs[0]['report']['judged']} judged of {runs[0]['report']['passages']} passages, 54 queries, the 8 "
             "released prompt qrels as sources; binary Cohen's kappa (level >= 2) of the pooled held-out labels of 5 "
             "folds grouped by query (the seed deals the folds and seeds the networks); estimators: "
             f"{', '.join(cfg0.estimators)} (defaults).", "",
             "| seed | **calibrated (selected)** | " + " | ".join(kinds) + " | selected - best kind alone | best single "
             "prompt (chosen on the training folds) | selected in the 5 folds | selected on every judgment |",
             "|---" * (len(kinds) + 6) + "|"]
    for r in runs:
        per = r["report"]["overall"]["per_estimator"]
        best = max(per[k] for k in kinds)
        picked = [pf["selected"] for pf in r["report"]["per_fold"]]
        folds = f"{picked[0]} (all {len(picked)})" if len(set(picked)) == 1 else ", ".join(picked)
        lines.append(f"| {r['seed']} | **{per[SELECTED]:.4f}** | " + " | ".join(f"{per[k]:.4f}" for k in kinds)
                     + f" | {per[SELECTED] - best:+.4f} | {per[SINGLE]:.4f} | {folds} | {r['selected']} |")
    kappas = [r["report"]["overall"]["kappa"] for r in runs]
    spreads = {k: [r["report"]["overall"]["per_estimator"][k] for r in runs] for k in [*kinds, SINGLE]}
    best_kinds = [max(r["report"]["overall"]["per_estimator"][k] for k in kinds) for r in runs]
    lines += ["", f"Selected model's kappa over the seeds: {min(kappas):.4f} .. {max(kappas):.4f} (spread "
              f"{max(kappas) - min(kappas):.4f}). The same spread of every kind alone, of the best kind alone in "
              f"each seed ({max(best_kinds) - min(best_kinds):.4f}) and of the best single prompt chosen on the "
              "training folds (the seed changes only which queries share a fold: fixed labels, one threshold "
              "each): " + ", ".join(f"{k} {max(v) - min(v):.4f}" for k, v in spreads.items()) + ".", "",
              "Labelled share / judged share per level (lowest .. highest over the four levels): the model fitted on "
              "every judgment, labelling DL20's own judged passages, and the held-out labels of the cross-validation:",
              "", "| seed | deployed model, its training passages | held out (cross-validation) |", "|---|---|---|"]
    lines += [f"| {r['seed']} | {_band(r['training_ratio'])} | {_band(r['held_out_ratio'])} |" for r in runs]
    lines += ["", "| one fit on all 11,386 judged passages (seed 0, one thread) | seconds | ratio to logistic |",
              "|---|---|---|", f"| logistic regression alone (baseline) | {t_logistic:.1f} | 1.0 |",
              f"| default estimators, their mean deployed | {t_fit:.1f} | {t_fit / t_logistic:.1f} |", "",
              f"Fresh-process `apply` of every fold's model (seed 0) to the held-out queries' sources: labels identical "
              f"to the cross-validation's in {runs[0]['applied']} of {cfg0.folds} folds.", "",
              "Seed 0 in detail:", "", cv_markdown(runs[0]["report"])]
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibrated_qrels_dl20.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
