"""Value digests of every file under a results folder, to compare two runs of the workflow (refactors must not
change results).

    python tools/results_digest.py results > before.tsv
    python tools/results_digest.py results > after.tsv
    python tools/results_digest.py --diff before.tsv after.tsv

Parquet tables are digested by their values (columns, rows, dtypes; not the file's bytes, which hold writer
metadata); JSON files by their content with timing keys dropped (``seconds``, ``*_seconds``, ``*_s``, ``timestamp``,
``elapsed``); logs and benchmark files are skipped; every other file by its bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

TIMING_KEYS = ("seconds", "timestamp", "elapsed", "started", "finished", "time", "rate", "per_second")


def _drop_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_timings(v) for k, v in value.items()
                if not any(k == t or k.endswith("_" + t) or k.endswith("_s") for t in TIMING_KEYS)}
    if isinstance(value, list):
        return [_drop_timings(v) for v in value]
    return value


def file_digest(path: Path) -> str:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        h = hashlib.sha256(str(table.schema.remove_metadata()).encode())
        h.update(table.to_pandas().to_csv(index=False).encode())
        return h.hexdigest()[:16]
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return hashlib.sha256(json.dumps(_drop_timings(doc), sort_keys=True).encode()).hexdigest()[:16]
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): file_digest(p) for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix not in (".log",) and "benchmarks" not in p.parts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="a results folder, or with --diff two digest files")
    ap.add_argument("--diff", action="store_true", help="compare two digest files: files only in one, files that differ")
    args = ap.parse_args(argv)
    if not args.diff:
        for k, v in digests(Path(args.paths[0])).items():
            print(f"{k}\t{v}")
        return 0
    a, b = ({line.split("\t")[0]: line.split("\t")[1] for line in Path(p).read_text().splitlines()} for p in args.paths)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    differ = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    for name, keys in (("only before", only_a), ("only after", only_b), ("differ", differ)):
        for k in keys:
            print(f"{name}\t{k}")
    print(f"{len(set(a) & set(b)) - len(differ)} equal, {len(differ)} differ, {len(only_a)} only before, "
          f"{len(only_b)} only after", file=sys.stderr)
    return 0 if not (only_a or only_b or differ) else 1


if __name__ == "__main__":
    sys.exit(main())
