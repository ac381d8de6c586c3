"""Benchmark: our vectorized paired permutation test vs scipy.stats.permutation_test vs the reference's loop.

    python benchmarks/significance.py                 # ultrarag A/B runs, 30 measures, 10,000 resamples
    python benchmarks/significance.py --synthetic     # synthetic per-query scores (fixed seed) instead
    python benchmarks/significance.py --loop-fraction 0.1  # run 10% of the Python loop, extrapolate

Workload: 10,000 resamples x 100 queries x 30 measures. The reference server's way is a Python loop per
measure: for each resample, flip the sign of each query's difference with ``random.getrandbits(1)`` and
recompute the mean. It runs in full by default (a few seconds); with ``--loop-fraction`` below 1 it is timed
on that fraction of the resamples and extrapolated linearly (its cost is linear in the number of
resamples), and the output says so. Ours must be >= 20x faster.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ultrarag"
CUTOFFS = [1, 3, 5, 10, 15, 20, 30, 50, 100]  # map, mrr, mrr@10 + 3 families x 9 cutoffs = 30 measures


def ultrarag_scores() -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """Per-query scores of the reference server's example A/B runs: (A, B) as queries x measures."""
    from autograde.metrics.config import RetrievalMetricsConfig
    from autograde.metrics.retrieval import load_qrels, load_runs, per_query_measures

    qrels = load_qrels(DATA / "qrels.txt")
    runs, _ = load_runs([DATA / "run_a.txt", DATA / "run_b.txt"])
    cfg = RetrievalMetricsConfig(cutoffs=CUTOFFS, mrr_cutoff=10)
    a, b = (per_query_measures(qrels, run, cfg) for run in runs.values())
    qids = sorted(set(a) | set(b))
    measures = list(next(iter(a.values())))
    xa = np.array([[a.get(q, {}).get(m, 0.0) for m in measures] for q in qids])
    xb = np.array([[b.get(q, {}).get(m, 0.0) for m in measures] for q in qids])
    return xa, xb, measures, f"ultrarag run_a vs run_b ({len(qids)} queries)"


def synthetic_scores(n_queries: int = 100, n_measures: int = 30, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """Scores in [0, 1] with a small per-measure effect, fixed seed."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, size=(n_queries, n_measures))
    effect = rng.uniform(0, 0.05, size=n_measures)
    xa = np.clip(base + effect + rng.normal(0, 0.1, size=base.shape), 0, 1)
    xb = np.clip(base + rng.normal(0, 0.1, size=base.shape), 0, 1)
    return xa, xb, [f"m{j}" for j in range(n_measures)], f"synthetic (seed {seed}, {n_queries} queries)"


def reference_loop(diffs: list[float], n_resamples: int) -> float:
    """The reference server's ``_permutation_test_two_sided`` (module ``random``, as it uses)."""
    obs = abs(sum(diffs) / len(diffs))
    n = len(diffs)
    cnt = 0
    for _ in range(n_resamples):
        s = 0.0
        for d in diffs:
            s += d if random.getrandbits(1) else -d
        if abs(s / n) >= obs:
            cnt += 1
    return cnt / n_resamples


def timed(func: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time over ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--synthetic", action="store_true", help="synthetic scores instead of the ultrarag runs")
    ap.add_argument("--n-resamples", type=int, default=10000)
    ap.add_argument("--loop-fraction", type=float, default=1.0,
                    help="fraction of resamples the Python loop runs (then extrapolated linearly); 1 = full")
    ap.add_argument("--repeat", type=int, default=5, help="repetitions of the fast methods (median)")
    args = ap.parse_args(argv)

    from scipy import stats

    from autograde.metrics.significance import paired_test, sign_flip_counts

    if args.synthetic or not DATA.is_dir():
        xa, xb, measures, label = synthetic_scores()
    else:
        xa, xb, measures, label = ultrarag_scores()
    n = args.n_resamples
    n_q, n_m = xa.shape
    diffs = xa - xb
    qids = [f"q{i}" for i in range(n_q)]
    per_a = {q: dict(zip(measures, xa[i].tolist(), strict=True)) for i, q in enumerate(qids)}
    per_b = {q: dict(zip(measures, xb[i].tolist(), strict=True)) for i, q in enumerate(qids)}

    t_core, counts = timed(lambda: sign_flip_counts(diffs, n, np.random.default_rng(0)), args.repeat)
    t_ours, ours = timed(lambda: paired_test(per_a, per_b, measures, n_resamples=n, seed=0), args.repeat)
    t_scipy, ref = timed(lambda: stats.permutation_test(
        (xa, xb), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True, permutation_type="samples",
        alternative="two-sided", n_resamples=n, axis=0, rng=np.random.default_rng(1)), max(1, args.repeat // 2))

    loop_n = max(1, round(n * min(args.loop_fraction, 1.0)))
    random.seed(2)
    t0 = time.perf_counter()
    loop_p = [reference_loop(diffs[:, j].tolist(), loop_n) for j in range(n_m)]
    t_loop_run = time.perf_counter() - t0
    t_loop = t_loop_run * n / loop_n

    max_dev = max(abs(ours[m]["p_value"] - float(ref.pvalue[j])) for j, m in enumerate(measures))
    max_dev_loop = max(abs(ours[m]["p_value"] - loop_p[j]) for j, m in enumerate(measures))
    assert counts.shape == (n_m,)

    print(f"workload: {n} resamples x {n_q} queries x {n_m} measures; data: {label}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; median of {args.repeat} runs for ours")
    print()
    print("| method | time (s) | vs ours (end-to-end) |")
    print("|---|---|---|")
    rows = [
        ("ours: sign_flip_counts (core, all measures in one matmul per chunk)", t_core),
        ("ours: paired_test (end-to-end: dicts -> matrices, means, p-values)", t_ours),
        ("scipy.stats.permutation_test (samples, vectorized, axis=0)", t_scipy),
        (f"reference loop (python random), {loop_n} resamples run, extrapolated x{n / loop_n:g}"
         if loop_n < n else "reference loop (python random), full", t_loop),
    ]
    for name, t in rows:
        print(f"| {name} | {t:.4f} | {t / t_ours:.1f}x |")
    print()
    if loop_n < n:
        print(f"note: the loop ran {loop_n} of {n} resamples in {t_loop_run:.2f} s; its time is extrapolated "
              "linearly to the full workload.")
    print(f"max |p(ours) - p(scipy)| over measures: {max_dev:.4f}; vs loop ({loop_n} resamples): {max_dev_loop:.4f}")
    speedup = t_loop / t_ours
    ok = speedup >= 20
    print(f"speed-up of ours over the reference loop: {speedup:.0f}x (required >= 20x): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
