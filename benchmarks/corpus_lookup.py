"""Benchmark: passage lookup by id through the corpus index vs a full scan of the corpus, JSONL and JSONL.gz.

    nice python benchmarks/corpus_lookup.py --write            # 5,000,000 passages, 20,000 pooled ids; writes
                                                               # docs/generated/corpus_lookup.md (docs/experiments.md quotes it)
    python benchmarks/corpus_lookup.py --passages 200000       # a quick run (prints only)
    python benchmarks/corpus_lookup.py --tmp /scratch --keep   # elsewhere; keep the files

The benchmark writes a synthetic corpus (JSONL, and the same as JSONL.gz at gzip level 1, one member; ~280 bytes a
passage of words drawn from a 5,000-word vocabulary, ids ``p<number>``) and one a tenth the size, under a temporary
folder, picks the pooled ids uniformly over each corpus, and times in separate processes (each reports its own wall
time and peak RSS), for each form:

- scan: ``read_corpus(..., wanted=ids)``, the full scan every step did before the index (the baseline, measured in
  the same run);
- first lookup: ``lookup_corpus`` with an empty cache: builds the index, keeping the pooled ids' lines on the way
  (the passage store of the file's content);
- second lookup: ``lookup_corpus`` again: the passage store has the pool (the index is opened and verified against
  the file, not read);
- the second lookup through the index alone (``lookup_index``, no store: what every lookup cost before the store);
- the same with the pooled ids drawn from the first tenth of the corpus, as this benchmark drew them before (a
  ``.gz`` file then decompresses a tenth of itself: the ids spread over the whole file are the honest case);
- a second lookup of 20 ids (what one checkpoint span of a ``.gz`` costs);
- the second lookup on the corpus a tenth the size (20,000 ids uniform over it): its peak RSS against the full
  corpus's shows whether the memory of a lookup grows with the corpus;
- ``autograde validate`` of an experiment whose corpus is that file (100 queries, 10 runs, top-20 each: the 20,000
  pooled passages), once its index exists.

Goals: the ``.gz`` index and the passage store on disk <= 0.2x the ``.gz`` file; the second lookup >= 50x faster
than the scan and under 5 s; lookup RSS independent of corpus size; validate under 10 s. Everything is removed at the
end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
OUT = REPO / "docs" / "generated" / "corpus_lookup.md"


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


def cpu_seconds() -> float:
    """User and system CPU time of this process, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def decode_all(corpus: str, cache: str) -> int:
    """Decode the whole ``.gz`` once through its index's checkpoints, as a lookup's reader does (rapidgzip, the
    same threads), parsing nothing: the floor of a lookup whose lines fall in every checkpoint span."""
    import rapidgzip

    from autograde.corpus.source import gzip_threads
    from autograde.corpus.store import CHECKPOINTS

    folder = next(p for p in Path(cache).glob("corpus-index/*") if not p.name.startswith("."))
    n = 0
    with rapidgzip.RapidgzipFile(corpus, parallelization=gzip_threads(), chunk_size=1 << 20) as f:
        with open(folder / CHECKPOINTS, "rb") as fh:
            f.import_index(fh)
        while block := f.read(4 << 20):
            n += len(block)
    return n


def child(op: str, corpus: str, ids_path: str, cache: str) -> None:
    """One measured operation in this process; prints ``{"seconds", "cpu", "rss_mb", "found"}``."""
    from autograde.core.errors import Problems

    ids = set(Path(ids_path).read_text().split())
    t, cpu = time.perf_counter(), cpu_seconds()
    if op == "scan":
        from autograde.io.corpus import read_corpus

        found = read_corpus([corpus], Problems(), wanted=ids)
    elif op == "lookup":
        from autograde.corpus.lookup import lookup_corpus

        found = lookup_corpus([corpus], ids, cache, Problems())
    elif op == "index":
        from autograde.core.ids import id_keys
        from autograde.corpus.index import open_index
        from autograde.corpus.lookup import lookup_index

        index = open_index(corpus, cache, Problems())
        assert index is not None
        wanted = sorted(ids)
        found = {doc_id: text for _, doc_id, text in lookup_index(index, wanted, id_keys(wanted))}
    elif op == "decode":
        found = {"bytes": decode_all(corpus, cache)}
    else:
        found = {}
    seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    rss = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_mb": rss, "found": len(found)}))


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
    cfg = root / f"experiment-{corpus.name}.yaml"
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
    ap.add_argument("--write", action="store_true", help=f"write the results to {OUT.relative_to(REPO)}")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    root = Path(tempfile.mkdtemp(prefix="autograde-corpus-bench-", dir=args.tmp))
    try:
        text = run(root, args.passages, args.pooled)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(text)
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text)
        print(f"wrote {OUT}")


def sample_ids(n: int, k: int, seed: int) -> list[str]:
    return [f"p{i}" for i in np.random.default_rng(seed).choice(n, size=k, replace=False)]


def run(root: Path, n: int, pooled: int) -> str:
    load = os.getloadavg()[0]
    t = time.perf_counter()
    small_n = max(n // 10, pooled)
    forms = {"JSONL": (root / "corpus.jsonl", root / "small.jsonl"),
             "JSONL.gz": (root / "corpus.jsonl.gz", root / "small.jsonl.gz")}
    write_corpus(forms["JSONL"][0], n)
    write_gzip(forms["JSONL"][0], forms["JSONL.gz"][0])
    write_corpus(forms["JSONL"][1], small_n, seed=1)
    write_gzip(forms["JSONL"][1], forms["JSONL.gz"][1])
    ids, small_ids, few = sample_ids(n, pooled, 1), sample_ids(small_n, pooled, 2), sample_ids(n, 20, 3)
    front = sample_ids(small_n, pooled, 4)
    for name, chosen in (("ids", ids), ("small_ids", small_ids), ("few", few), ("front", front)):
        (root / f"{name}.txt").write_text("\n".join(chosen) + "\n")
    sizes = {label: paths[0].stat().st_size for label, paths in forms.items()}
    print(f"corpus: {n:,} passages, JSONL {sizes['JSONL'] / 1e9:.2f} GB, JSONL.gz {sizes['JSONL.gz'] / 1e9:.2f} GB; "
          f"{pooled:,} pooled ids; made in {time.perf_counter() - t:.0f} s", flush=True)
    base = measure("none", forms["JSONL"][0], root / "ids.txt", root / "cache")
    rows = []
    for label, (corpus, small) in forms.items():
        cache = root / f"cache-{corpus.name}"
        scan = measure("scan", corpus, root / "ids.txt", cache)
        first = measure("lookup", corpus, root / "ids.txt", cache)
        second = measure("lookup", corpus, root / "ids.txt", cache)
        through_index = measure("index", corpus, root / "ids.txt", cache)
        assert scan["found"] == first["found"] == second["found"] == through_index["found"] == pooled, (
            scan, first, second, through_index)
        store = sum(f.stat().st_size for f in cache.glob("passages/*/*.seg"))  # the pool's passages only
        few_second = measure("lookup", corpus, root / "few.txt", cache)
        front_second = measure("lookup", corpus, root / "front.txt", cache)
        decode = measure("decode", corpus, root / "ids.txt", cache) if corpus.name.endswith(".gz") else None
        folder = next(p for p in cache.glob("corpus-index/*") if not p.name.startswith("."))
        index = sum(f.stat().st_size for f in folder.iterdir())
        small_cache = root / f"cache-{small.name}"
        measure("lookup", small, root / "small_ids.txt", small_cache)
        small_second = measure("lookup", small, root / "small_ids.txt", small_cache)
        validate_s = time_validate(write_experiment(root, corpus, ids, cache))
        rows.append({"label": label, "size": sizes[label], "scan": scan, "first": first, "second": second,
                     "through_index": through_index, "few": few_second, "front": front_second, "index": index,
                     "store": store, "small": small_second, "validate": validate_s, "decode": decode})
        print(f"  {label}: done", flush=True)
    return report(rows, n, pooled, small_n, base, (load, os.getloadavg()[0]))


def report(rows: list[dict], n: int, pooled: int, small_n: int, base: dict, load: tuple[float, float]) -> str:
    from autograde.corpus.source import gzip_threads

    out = [f"| corpus ({n:,} passages) | full scan (before) | first lookup (builds the index, keeps the pool) | "
           "second lookup (passage store) | scan / second lookup | second lookup through the index alone | "
           "new ids from the first tenth (index) | index + store on disk (x the file) | "
           "peak RSS scan / first / second |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['label']}, {r['size'] / 1e9:.2f} GB | {r['scan']['seconds']:.1f} s | "
                   f"{r['first']['seconds']:.1f} s | {r['second']['seconds']:.2f} s | "
                   f"{r['scan']['seconds'] / r['second']['seconds']:.0f}x | {r['through_index']['seconds']:.2f} s "
                   f"({r['scan']['seconds'] / r['through_index']['seconds']:.0f}x) | {r['front']['seconds']:.2f} s "
                   f"({r['scan']['seconds'] / r['front']['seconds']:.0f}x) | {r['index'] / 1e6:.0f} + "
                   f"{r['store'] / 1e6:.1f} MB ({(r['index'] + r['store']) / r['size']:.2f}x) | "
                   f"{r['scan']['rss_mb']:.0f} / {r['first']['rss_mb']:.0f} / {r['second']['rss_mb']:.0f} MB |")
    by = {r["label"]: r for r in rows}
    j, g = by["JSONL"], by["JSONL.gz"]
    out += ["", f"The pooled ids are spread uniformly over the corpus (a pool of {pooled:,} of {n:,} passages puts "
            "a wanted line in nearly every checkpoint span of the .gz, so its lookup through the index decompresses "
            "nearly all of it; from the first tenth, a tenth of it). The first lookup keeps the pool's passages in "
            "the passage store of the file's content (only those: "
            f"{g['store'] / 1e6:.1f} MB for {pooled:,} passages), from the index build's own pass; the second "
            "reads them there after checking that the file is unchanged. "
            f"Peak RSS of a second lookup of {pooled:,} ids: {j['second']['rss_mb']:.0f} MB (JSONL) and "
            f"{g['second']['rss_mb']:.0f} MB (JSONL.gz) on {n:,} passages; {j['small']['rss_mb']:.0f} MB and "
            f"{g['small']['rss_mb']:.0f} MB on {small_n:,} (Python and the imports alone: {base['rss_mb']:.0f} MB). "
            f"A second lookup of 20 ids: {j['few']['seconds']:.2f} s (JSONL), {g['few']['seconds']:.2f} s "
            f"(JSONL.gz). `autograde validate` of an experiment with that corpus ({pooled // 200} queries, 10 runs, "
            f"{pooled:,} pooled passages), its index built: {j['validate']:.1f} s (JSONL), {g['validate']:.1f} s "
            "(JSONL.gz).",
            "", f"CPU time (all threads) of the full scan and the second lookup: {j['scan']['cpu']:.1f} s and "
            f"{j['second']['cpu']:.2f} s (JSONL), {g['scan']['cpu']:.1f} s and {g['second']['cpu']:.2f} s (JSONL.gz). "
            f"Decoding the whole .gz once through its checkpoints with the lookup's reader (rapidgzip, "
            f"{gzip_threads()} threads), parsing nothing: {g['decode']['seconds']:.2f} s wall, "
            f"{g['decode']['cpu']:.2f} s CPU ({g['decode']['cpu'] / (g['size'] / 1e9):.1f} s CPU per GB of .gz): the "
            "floor of a lookup whose ids fall in nearly every checkpoint span."]
    speed = "; ".join(f"{r['label']} {r['scan']['seconds'] / r['second']['seconds']:.0f}x in "
                      f"{r['second']['seconds']:.2f} s" for r in rows)
    rss = "; ".join(f"{r['label']} {r['second']['rss_mb'] - r['small']['rss_mb']:+.0f} MB" for r in rows)
    out += ["", f"Goals: the .gz index and the passage store <= 0.2x the .gz file: "
            f"{(g['index'] + g['store']) / g['size']:.2f}x. The second lookup >= 50x "
            f"faster than the scan and under 5 s: {speed}. Peak RSS of a lookup independent of the corpus size "
            f"(10x the passages): {rss}.",
            "", f"Measured on {dt.date.today().isoformat()} with `nice python benchmarks/corpus_lookup.py --write` "
            f"({platform.machine()}, {os.cpu_count()} cores shared with other jobs, load average {load[0]:.1f} at the "
            f"start, {load[1]:.1f} at the end; absolute times vary by 2-4x with the load, the ratios less)."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
