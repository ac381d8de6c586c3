"""Benchmark: a TREC run file of 10^7 lines into ingest's table: line by line into dicts, then rows, then a
DataFrame (what ingest did before) vs in bulk into an Arrow-backed table (``read_run_table``, what it does now).

    nice python benchmarks/run_reading.py                  # 10,000,000 lines (50 runs x 200 queries x 1,000)
    python benchmarks/run_reading.py --lines 1000000       # a quick run

Each reader runs in its own process, which reports its wall time and peak RSS (VmHWM). The run file is written
under a temporary folder and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_run(path: Path, lines: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    depth, queries = 1000, 200
    runs = max(lines // (depth * queries), 1)
    with open(path, "w") as fh:
        for r in range(runs):
            for q in range(queries):
                docs = rng.choice(8_800_000, size=depth, replace=False)
                fh.write("".join(f"{q} Q0 {d} {i + 1} {depth - i:.3f} run{r}\n" for i, d in enumerate(docs.tolist())))


def child(op: str, path: str) -> None:
    from autograde.core.errors import Problems

    t = time.perf_counter()
    if op == "lines":
        import pandas as pd

        from autograde.io.trec import read_run

        rf = read_run(path, Problems())  # then the rows and table ingest built from it before the bulk reader
        rows = [(tag, qid, doc, rf.ranks[tag][qid][doc], score, "run") for tag, run in rf.runs.items()
                for qid, docs in run.items() for doc, score in docs.items()]
        n = len(pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "rank", "score", "source"]))
    elif op == "table":
        from autograde.io.run_table import read_run_table

        n = len(read_run_table(path, Problems()))
    else:
        from autograde.io.run_table import read_run_table  # the imports alone

        n = 0
    print(json.dumps({"seconds": time.perf_counter() - t, "rss_mb": peak_rss_mb(), "rows": n}))


def measure(op: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, str(HERE), "--child", op, str(path)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    root = Path(tempfile.mkdtemp(prefix="autograde-run-bench-", dir=args.tmp))
    try:
        path = root / "runs.txt"
        write_run(path, args.lines)
        base = measure("none", path)
        lines, table = measure("lines", path), measure("table", path)
        assert lines["rows"] == table["rows"], (lines, table)
        print(f"| run file ({table['rows']:,} lines, {path.stat().st_size / 1e9:.2f} GB) | seconds | peak RSS |")
        print("|---|---|---|")
        print(f"| before: read_run (dicts) + rows + DataFrame, as ingest did | {lines['seconds']:.1f} | "
              f"{lines['rss_mb']:.0f} MB |")
        print(f"| now: read_run_table (bulk, Arrow-backed DataFrame) | {table['seconds']:.1f} | {table['rss_mb']:.0f} MB |")
        print(f"| python + imports alone | | {base['rss_mb']:.0f} MB |")
        print(f"speed-up {lines['seconds'] / table['seconds']:.1f}x, memory {lines['rss_mb'] / table['rss_mb']:.1f}x less")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
