"""Benchmark of the LLM-RUBRIC stage on its released synthetic data and of calibrated qrels on DL20.

    .venv/bin/python benchmarks/rubric.py                 # everything: timings, 10-seed table, DL20 kappa
    .venv/bin/python benchmarks/rubric.py --only-timing   # the training-time table alone (docs/generated/)
    .venv/bin/python benchmarks/rubric.py --seeds 3       # fewer seeds for the cross-validated table
    .venv/bin/python benchmarks/rubric.py --select        # also time hyperparameter selection (9 grid points)

Prints Markdown tables:

1. Training time of one fit on all annotations of the synthetic set (250 dialogues, 223 with LLM
   answers and passing the screening; default settings: 5-member ensemble with early stopping), median
   of ``--repeats`` runs, against a baseline measured in the same run: the released code's settings (one
   network, N(0, 1) initialization, no early stopping, 20 + 30 epochs, lr 0.001, batch 64, h1 = h2 = 25).
   Written to ``docs/generated/rubric_timing.md`` (``--out``), which docs/rubric.md quotes.
2. The acceptance table: 5-fold CV grouped by dialogue, main task Q0, mean ± std over the seeds for the
   network and every baseline; the released-code settings over the same seeds for comparison.
3. Calibrated qrels on DL20 from the eight released prompt qrels (the regressions; every estimator over seeds,
   with the fit/apply check, is ``benchmarks/rubric_calibrated.py``): kappa per fold and overall against every
   single prompt, with the time taken.

Timings use one torch thread (the rules run with ``threads: 1``); reference data comes from ../shared/data.
"""

from __future__ import annotations

import argparse
import glob
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from autograde.config.rubric import (  # noqa: E402
    CalibratedQrelsConfig,
    EvaluationSettings,
    Hyperparameters,
    RubricConfig,
    SelectionSettings,
)
from autograde.rubric.cv import select_hyperparameters  # noqa: E402
from autograde.rubric.evaluate import METRICS, evaluate, markdown_report  # noqa: E402
from autograde.rubric.stages import load_training_data  # noqa: E402
from autograde.rubric.train import fit  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
SYNTH = SHARED / "llm-rubric" / "synthetic"
DL20 = SHARED / "dl20"

RELEASED = Hyperparameters(hidden1=25, hidden2=25, learning_rate=0.001, batch_size=64, pretrain_epochs=20,
                           finetune_epochs=30, members=1, judge_l2=0.0, init="paper", early_stopping=False)
"""The released code's shipped hyperparameters (NOTES: batch 64, lr 0.001, h1 = h2 = 25, 20 + 30 epochs)."""


def _timed(fn, repeats: int, outputs: list | None = None) -> tuple[float, object]:
    """Median time of ``repeats`` calls and the last result (every result appended to ``outputs`` if given)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if outputs is not None:
            outputs.append(out)
    return statistics.median(times), out


def _fmt(s: dict[str, float]) -> str:
    return f"{s['mean']:.3f} ± {s['std']:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds of the cross-validated table (default 10)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats of one fit (median reported)")
    ap.add_argument("--select", action="store_true", help="also time hyperparameter selection by 5-fold CV")
    ap.add_argument("--no-dl20", action="store_true", help="skip the DL20 calibrated-qrels part")
    ap.add_argument("--only-timing", action="store_true", help="measure and write the training-time table only")
    ap.add_argument("--out", default=str(REPO / "docs" / "generated"), help="folder of rubric_timing.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if not SYNTH.exists():
        print(f"reference data missing: {SYNTH} (the benchmark needs ../shared/data beside the checkout)")
        return 1
    cfg = RubricConfig.model_validate({
        "rubric": str(REPO / "config" / "rubric" / "dialogue.yaml"),
        "llm": str(SYNTH / "gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv"),
        "human": str(SYNTH / "human_judges_synth_all_FIXED_ANON.tsv"),
        "texts": str(SYNTH / "synth_dialogue_ids.tsv")})
    t_load, (_rubric, data) = _timed(lambda: load_training_data(cfg), 1)
    print(f"# LLM-RUBRIC benchmark (torch {torch.__version__}, 1 thread)\n")
    print(f"{len(data)} annotations of {len(set(data.text_ids))} dialogues by {len(set(data.judges))} judges "
          f"(read in {t_load:.2f} s)\n")

    fits: list = []
    t_ours, model = _timed(lambda: fit(data, cfg.network, 0), args.repeats, fits)
    first = fits[0].predict_proba(data)
    same = all(np.array_equal(first, m.predict_proba(data)) for m in fits[1:])
    t_rel, _ = _timed(lambda: fit(data, RELEASED, 0), args.repeats)
    epochs = [(r.pretrain_epochs, r.finetune_epochs) for r in model.reports]  # type: ignore[union-attr]
    rows = [f"| one fit on all {len(data)} annotations, one thread (median of {args.repeats}) | seconds | ratio to "
            "the released code's settings |", "|---|---|---|",
            f"| released code's settings: 1 network, 20 + 30 epochs, no early stopping (baseline) | {t_rel:.2f} | 1.00 |",
            f"| default: 5 members, early stopping (best epochs pre/fine: {epochs}) | {t_ours:.2f} | "
            f"{t_ours / t_rel:.2f} |"]
    if args.select:
        t_sel, (best, table) = _timed(lambda: select_hyperparameters(data, cfg.network, SelectionSettings(), 0), 1)
        rows.append(f"| hyperparameter selection: {len(table)} grid points x 5 folds (picked h={best.hidden1}, "  # type: ignore[union-attr]
                    f"lr={best.learning_rate:g}) | {t_sel:.2f} | {t_sel / t_rel:.2f} |")  # type: ignore[union-attr]
    rows += ["", f"The {args.repeats} fits with seed 0 give identical predictions: {'yes' if same else 'NO'} "
             f"(torch {torch.__version__}, `benchmarks/rubric.py`).", ""]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rubric_timing.md").write_text("\n".join(rows))
    print(f"## Training time, all annotations (median of {args.repeats})\n")
    print("\n".join(rows))
    if args.only_timing:
        return 0

    seeds = list(range(args.seeds))
    settings = EvaluationSettings(folds=5, seeds=seeds)
    t_eval, ev = _timed(lambda: evaluate(data, cfg.network, settings), 1)
    t_rel_eval, ev_rel = _timed(lambda: evaluate(data, RELEASED, settings), 1)
    print(f"## Cross-validated Q0, 5 folds grouped by dialogue, {len(seeds)} seeds ({t_eval:.1f} s; released "
          f"settings {t_rel_eval:.1f} s)\n")
    print(markdown_report(ev.report))  # type: ignore[union-attr]
    rel = ev_rel.report["summary"]["network"]["Q0"]  # type: ignore[union-attr]
    print("Released code's settings over the same seeds (network only): "
          + ", ".join(f"{m} {_fmt(rel[m])}" for m in METRICS))
    per_seed = [round(s["scores"]["network"]["Q0"]["pearson"], 4) for s in ev.report["per_seed"]]  # type: ignore[union-attr]
    per_seed_rel = [round(s["scores"]["network"]["Q0"]["pearson"], 4) for s in ev_rel.report["per_seed"]]  # type: ignore[union-attr]
    print(f"\nPer-seed Pearson, default: {per_seed}\nPer-seed Pearson, released settings: {per_seed_rel}\n")

    if not args.no_dl20 and DL20.exists():
        from autograde.calibrated.cv import cross_validate_qrels
        from autograde.calibrated.features import features_from_sources
        from autograde.calibrated.report import cv_markdown
        from autograde.io.trec import read_qrels

        qcfg = CalibratedQrelsConfig.model_validate({
            "sources": sorted(glob.glob(str(DL20 / "autograded-qrels" / "*.qrel"))),
            "judgments": str(DL20 / "qrels.dl20-passage.txt"), "estimators": ["logistic", "ordinal_logistic"]})
        t0 = time.perf_counter()
        feats = features_from_sources(qcfg.sources, qcfg)
        _q, report, _t = cross_validate_qrels(qcfg, feats, read_qrels(qcfg.judgments))
        print(f"## DL20 calibrated qrels, regressions only ({time.perf_counter() - t0:.1f} s, "
              f"{feats.matrix.shape[1]} features; every estimator: benchmarks/rubric_transfer.py qrels)\n")
        print(cv_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
