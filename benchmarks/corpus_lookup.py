"""Benchmark: passage lookup by id through the corpus index vs today's full scan of the corpus.

    nice python benchmarks/corpus_lookup.py                    # 5,000,000 passages, 20,000 pooled ids
    python benchmarks/corpus_lookup.py --passages 200000       # a quick run
    python benchmarks/corpus_lookup.py --tmp /scratch --keep   # elsewhere; keep the files

The benchmark writes a synthetic corpus (JSONL, and the same as JSONL.gz; ~250 bytes a passage of words drawn
from a 5,000-word vocabulary, ids ``p<number>``) under a temporary folder, picks the pooled ids, and times in
separate processes (each reports its own wall time and peak RSS):

- scan: ``read_corpus(..., wanted=ids)``, today's full scan (the baseline, measured in the same run);
- first lookup: ``lookup_corpus`` with an empty cache: builds the index, then looks up;
- second lookup: ``lookup_corpus`` again: the index exists;
- second lookup on a corpus a tenth the size: its peak RSS against the full corpus's shows whether the memory of a
  lookup grows with the corpus;
- ``autograde validate`` of an experiment whose corpus is the JSONL file (100 queries, 10 runs, top-20 each:
  20,000 pooled passages), once its index exists.

Goal: second lookup >= 50x faster than the scan and under 5 s; lookup RSS independent of corpus size; validate
under 10 s. Everything is removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


def write_corpus(path: Path, n: int, seed: int = 0) -> None:
    """``n`` JSONL passages of 150-350 characters cut from a stream of words of a fixed vocabulary (deterministic)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:x}{'abcdefgh'[i % 8] * (i % 5)}" for i in range(5000)])
    stream = " ".join(vocab[rng.integers(0, len(vocab), size=2_000_000)])
    with open(path, "w", encoding="utf-8") as fh:
        for start in range(0, n, 100_000):
            m = min(100_000, n - start)
            offsets = rng.integers(0, len(stream) - 400, size=m).tolist()
            lengths = rng.integers(150, 350, size=m).tolist()
            fh.write("".join(f'{{"docid": "p{start + i}", "text": "{stream[a:a + k].strip()}"}}\n'
                             for i, (a, k) in enumerate(zip(offsets, lengths, strict=True))))


def write_gzip(src: Path, dst: Path) -> None:
    with open(src, "rb") as fin, gzip.open(dst, "wb", compresslevel=1) as fout:
        shutil.copyfileobj(fin, fout, 16 << 20)


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM; unlike ru_maxrss it does not carry the parent's over exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(op: str, corpus: str, ids_path: str, cache: str) -> None:
    """One measured operation in this process; prints ``{"seconds", "rss_mb", "found"}``."""
    from autograde.core.errors import Problems

    ids = set(Path(ids_path).read_text().split())
    t = time.perf_counter()
    if op == "scan":
        from autograde.io.corpus import read_corpus

        found = read_corpus([corpus], Problems(), wanted=ids)
    elif op == "lookup":
        from autograde.corpus.lookup import lookup_corpus

        found = lookup_corpus([corpus], ids, cache, Problems())
    else:
        found = {}
    seconds = time.perf_counter() - t
    rss = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "rss_mb": rss, "found": len(found)}))


def measure(op: str, corpus: Path, ids: Path, cache: Path) -> dict:
    out = subprocess.run([sys.executable, str(HERE), "--child", op, str(corpus), str(ids), str(cache)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_experiment(root: Path, corpus: Path, ids: list[str], cache: Path) -> Path:
    """Queries x 10 runs x top-20 distinct passages = the pooled ids (100 queries for 20,000), as an experiment."""
    queries = [f"q{i}" for i in range(len(ids) // 200)]
    (root / "queries.tsv").write_text("".join(f"{q}\tquery number {q}\n" for q in queries))
    lines = []
    for r in range(10):
        for qi, q in enumerate(queries):
            for rank in range(20):
                doc = ids[(qi * 10 + r) * 20 + rank]
                lines.append(f"{q} Q0 {doc} {rank + 1} {100 - rank} run{r}\n")
    (root / "runs.txt").write_text("".join(lines))
    cfg = root / "experiment.yaml"
    cfg.write_text(json.dumps({"data": {"queries": str(root / "queries.tsv"), "corpus": [str(corpus)],
                                        "runs": [str(root / "runs.txt")]},
                               "grading": {"cache_dir": str(cache)}, "results_dir": str(root / "results")}))
    return cfg


def time_validate(cfg: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config", str(cfg)], check=True,
                   capture_output=True, text=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=5_000_000)
    ap.add_argument("--pooled", type=int, default=20_000)
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="where the synthetic corpus is written")
    ap.add_argument("--keep", action="store_true", help="keep the corpus and indexes")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    root = Path(tempfile.mkdtemp(prefix="autograde-corpus-bench-", dir=args.tmp))
    try:
        run(root, args.passages, args.pooled)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def run(root: Path, n: int, pooled: int) -> None:
    t = time.perf_counter()
    jsonl, gz, small = root / "corpus.jsonl", root / "corpus.jsonl.gz", root / "small.jsonl"
    write_corpus(jsonl, n)
    write_gzip(jsonl, gz)
    write_corpus(small, max(n // 10, pooled))
    rng = np.random.default_rng(1)
    ids = [f"p{i}" for i in rng.choice(max(n // 10, pooled), size=pooled, replace=False)]  # in both corpora
    ids_path = root / "ids.txt"
    ids_path.write_text("\n".join(ids) + "\n")
    print(f"corpus: {n:,} passages, JSONL {jsonl.stat().st_size / 1e9:.2f} GB, JSONL.gz {gz.stat().st_size / 1e9:.2f} "
          f"GB; {pooled:,} pooled ids; made in {time.perf_counter() - t:.0f} s", flush=True)
    base = measure("none", jsonl, ids_path, root / "cache")
    rows = []
    for label, corpus in (("JSONL", jsonl), ("JSONL.gz", gz)):
        cache = root / f"cache-{corpus.name}"
        scan = measure("scan", corpus, ids_path, cache)
        first = measure("lookup", corpus, ids_path, cache)
        second = measure("lookup", corpus, ids_path, cache)
        assert scan["found"] == first["found"] == second["found"] == pooled, (scan, first, second)
        index = sum(f.stat().st_size for f in next(cache.glob("corpus-index/*")).iterdir())
        rows.append((label, scan, first, second, index))
        print(f"  {label}: done", flush=True)
    small_second = measure("lookup", small, ids_path, root / "cache-small")
    small_second = measure("lookup", small, ids_path, root / "cache-small")
    cfg = write_experiment(root, jsonl, ids, root / "cache-corpus.jsonl")
    validate_s = time_validate(cfg)

    print()
    print(f"| corpus ({n:,} passages) | full scan (today) | first lookup (builds index) | second lookup | "
          "speed-up (scan / second) | index on disk | peak RSS scan / first / second |")
    print("|---|---|---|---|---|---|---|")
    for label, scan, first, second, index in rows:
        print(f"| {label} | {scan['seconds']:.1f} s | {first['seconds']:.1f} s | {second['seconds']:.2f} s | "
              f"{scan['seconds'] / second['seconds']:.0f}x | {index / 1e6:.0f} MB | "
              f"{scan['rss_mb']:.0f} / {first['rss_mb']:.0f} / {second['rss_mb']:.0f} MB |")
    print()
    print(f"peak RSS of a second lookup of the {pooled:,} ids: {rows[0][3]['rss_mb']:.0f} MB on {n:,} passages, "
          f"{small_second['rss_mb']:.0f} MB on {max(n // 10, pooled):,} passages (python + imports alone: "
          f"{base['rss_mb']:.0f} MB)")
    print(f"autograde validate ({pooled // 200} queries, 10 runs, {pooled:,} pooled passages, index built): "
          f"{validate_s:.1f} s")
    second = rows[0][3]["seconds"]
    print(f"goals: second lookup >= 50x faster than the scan: {rows[0][1]['seconds'] / second:.0f}x; under 5 s: "
          f"{second:.2f} s; validate under 10 s: {validate_s:.1f} s")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
