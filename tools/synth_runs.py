"""Synthetic runs for any qrels file: the systems of a human-sample simulation (benchmarks/human_sample.py --runs).

    python tools/synth_runs.py QRELS OUT_DIR [--runs 30] [--docs 1000] [--seed 0]

Writes OUT_DIR/<run>.run (TREC format, ``--docs`` passages per judged query): run k of n has quality
``1 - k / n`` and scores every judged passage ``grade * quality * 2 + U(0, 3)`` and every other passage ``U(0, 3)``
(passages outside the qrels, named ``u<query>_<n>``, count as not relevant), so better runs rank relevant passages
higher and every judged passage is in every run; the runs are named ``synth-01`` .. ``synth-<n>`` from the best.
The same construction as tools/synth_dl20_runs.py (which names its runs after DL20's submitted ones), for any
collection.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from pathlib import Path


def read_grades(path: Path) -> dict[str, dict[str, int]]:
    """``{query: {passage: grade}}`` of a TREC qrels file (``query 0 passage grade`` per line)."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise SystemExit(f"{path}:{n}: expected 'query 0 passage grade', got {line!r}")
        qrels[parts[0]][parts[2]] = int(parts[3])
    if not qrels:
        raise SystemExit(f"{path}: no judgments")
    return qrels


def write_runs(qrels: dict[str, dict[str, int]], out: Path, runs: int, docs: int, seed: int) -> list[Path]:
    """Write the runs (see the module) and return their paths."""
    if runs < 2:
        raise SystemExit(f"--runs {runs}: a leaderboard needs at least 2 runs")
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    width = max(2, len(str(runs)))
    paths = []
    for k in range(runs):
        name = f"synth-{k + 1:0{width}d}"
        quality = 1.0 - k / runs
        lines = []
        for q in sorted(qrels):
            best: dict[str, float] = {}  # a passage drawn twice keeps its higher score
            for d, g in qrels[q].items():
                best[d] = g * quality * 2 + rng.random() * 3
            for _ in range(max(0, docs - len(qrels[q]))):
                d = f"u{q}_{rng.randrange(50 * docs)}"
                best[d] = max(best.get(d, 0.0), rng.random() * 3)
            ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
            lines += [f"{q} Q0 {d} {rank} {score:.6f} {name}\n" for rank, (d, score) in enumerate(ranked, start=1)]
        path = out / f"{name}.run"
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("qrels", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=30, help="number of runs (default: 30)")
    ap.add_argument("--docs", type=int, default=1000, help="passages per query and run (default: 1000)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    qrels = read_grades(a.qrels)
    paths = write_runs(qrels, a.out, a.runs, a.docs, a.seed)
    print(f"{len(paths)} runs x {len(qrels)} queries x {a.docs} passages -> {a.out}")


if __name__ == "__main__":
    main()
