"""Benchmark: random access into a .gz corpus with rapidgzip (what the corpus index uses) and indexed_gzip.

    nice python benchmarks/gzip_random_access.py --write      # 1,000,000 passages; writes
                                                              # docs/generated/gzip_random_access.md
    pip install indexed-gzip==1.10.3                          # to include indexed_gzip (not a dependency:
                                                              # without it, its row is left out and it says so)

The corpus is :func:`corpus_lookup.write_corpus`'s (JSONL at gzip level 1, one member). Each library, in its own
process, makes one pass over the file that records checkpoints about every 1 MiB (rapidgzip: ``chunk_size`` of
compressed bytes; indexed_gzip: ``spacing`` of decompressed bytes, 32 KiB windows), exports its index, then
imports it and reads 300 bytes at sorted random offsets: 4,000 of them (the density of 20,000 pooled ids in
5,000,000 passages: nearly every checkpoint span holds one) and 20. The baseline is Python's gzip decompressing the
whole file once (what a full scan decompresses before it parses anything).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
OUT = HERE.parents[1] / "docs" / "generated" / "gzip_random_access.md"
SPACING = 1 << 20


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def offsets(size: int, k: int, seed: int) -> list[int]:
    return sorted(np.random.default_rng(seed).integers(0, size - 400, size=k).tolist())


def child(lib: str, gz: str, size: int, threads: int) -> dict:
    """One library: build, export, import, read; wall seconds and peak RSS."""
    index = f"{gz}.{lib}-{threads}.idx"
    out: dict = {}
    t = time.perf_counter()
    if lib == "gzip":
        import gzip

        with gzip.open(gz, "rb") as fh:
            while fh.read(16 << 20):
                pass
        return {"decode": time.perf_counter() - t, "rss": peak_rss_mb()}
    if lib == "rapidgzip":
        import rapidgzip

        with rapidgzip.RapidgzipFile(gz, parallelization=threads, chunk_size=SPACING) as f:
            while f.read(16 << 20):
                pass
            with open(index, "wb") as fh:
                f.export_index(fh, rapidgzip.IndexFormat.GZTOOL)

        def opened():
            f = rapidgzip.RapidgzipFile(gz, parallelization=threads, chunk_size=SPACING)
            with open(index, "rb") as fh:
                f.import_index(fh)
            return f
    else:
        import indexed_gzip

        with indexed_gzip.IndexedGzipFile(gz, spacing=SPACING) as f:
            f.build_full_index()
            f.export_index(index)

        def opened():
            return indexed_gzip.IndexedGzipFile(gz, spacing=SPACING, index_file=index)
    out["build"] = time.perf_counter() - t
    out["index_bytes"] = os.path.getsize(index)
    for name, k in (("dense", 4000), ("sparse", 20)):
        t = time.perf_counter()
        with opened() as f:
            got = 0
            for o in offsets(size, k, 1):
                f.seek(o)
                got += len(f.read(300))
        assert got == 300 * k
        out[name] = time.perf_counter() - t
    out["rss"] = peak_rss_mb()
    os.unlink(index)
    return out


def measure(lib: str, gz: Path, size: int, threads: int) -> dict | None:
    res = subprocess.run([sys.executable, str(HERE), "--child", lib, str(gz), str(size), str(threads)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        print(f"{lib}: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else 'failed'}", flush=True)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=1_000_000)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--write", action="store_true", help="write docs/generated/gzip_random_access.md")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        lib, gz, size, threads = args.child
        print(json.dumps(child(lib, gz, int(size), int(threads))))
        return
    sys.path.insert(0, str(HERE.parent))
    from corpus_lookup import write_corpus, write_gzip

    load = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="autograde-gzip-bench-", dir=args.tmp))
    try:
        write_corpus(root / "c.jsonl", args.passages)
        write_gzip(root / "c.jsonl", root / "c.jsonl.gz")
        size, gz_size = (root / "c.jsonl").stat().st_size, (root / "c.jsonl.gz").stat().st_size
        cores = len(os.sched_getaffinity(0))
        base = measure("gzip", root / "c.jsonl.gz", size, 1)
        assert base is not None
        rows = [(f"rapidgzip 0.16, {t} thread{'s' if t > 1 else ''}", measure("rapidgzip", root / "c.jsonl.gz", size, t))
                for t in sorted({1, cores})]
        missing = importlib.util.find_spec("indexed_gzip") is None
        if missing:
            print("indexed_gzip is not installed (it is not a dependency): its row is left out; "
                  "pip install indexed-gzip==1.10.3 to include it", flush=True)
        else:
            rows.append(("indexed_gzip 1.10 (zlib), 1 thread",
                         measure("indexed_gzip", root / "c.jsonl.gz", size, 1)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    lines = [f"| {args.passages:,} passages: {size / 1e6:.0f} MB of JSONL, {gz_size / 1e6:.0f} MB of .gz | one pass "
             "(decode all, record checkpoints) | index (x the .gz) | 4,000 sorted reads | 20 reads | peak RSS |",
             "|---|---|---|---|---|---|",
             f"| Python gzip, decode all once (baseline) | {base['decode']:.2f} s | - | - | - | {base['rss']:.0f} MB |"]
    for label, r in rows:
        if r is None:
            raise SystemExit(f"{label}: its measurement failed (the error is above)")
        lines.append(f"| {label} | {r['build']:.2f} s | {r['index_bytes'] / 1e6:.1f} MB "
                     f"({r['index_bytes'] / gz_size:.3f}x) | {r['dense']:.2f} s | {r['sparse']:.2f} s | "
                     f"{r['rss']:.0f} MB |")
    if missing:
        lines += ["", "indexed_gzip was not installed for this run (it is not a dependency): its row is left out."]
    lines += ["", f"Checkpoints about every {SPACING >> 20} MiB. Measured on {dt.date.today().isoformat()} with "
              f"`nice python benchmarks/gzip_random_access.py --write` ({platform.machine()}, {os.cpu_count()} cores "
              f"shared with other jobs, load average {load:.1f} at the start)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text)


if __name__ == "__main__":
    main()
