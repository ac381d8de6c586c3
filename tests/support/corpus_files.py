"""Small corpus files for the corpus index's tests: deterministic passages as JSONL or TSV, plain or gzip."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

WORDS = ["bee", "honey", "tide", "moon", "bread", "é", "ü"]


def make_docs(n: int, seed: int = 7) -> dict[str, str]:
    """``n`` passages ``doc-<i>`` of 1 to 60 words (some non-ASCII)."""
    rng = random.Random(seed)
    return {f"doc-{i}": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))) for i in range(n)}


def jsonl(docs: dict[str, str]) -> str:
    """JSONL with every id key and text key the readers know, titles, extra fields, escaped and raw non-ASCII."""
    lines = []
    for i, (k, v) in enumerate(docs.items()):
        key = ("doc_id", "docid", "id", "_id", "pid")[i % 5]
        rec = {key: k, "text": v} if i % 7 else {"title": f"T{i}", key: k, "contents": v, "url": [1, {"a": 2}]}
        lines.append(json.dumps(rec, ensure_ascii=i % 2 == 0))
    return "\n".join(lines) + "\n"


def tsv(docs: dict[str, str]) -> str:
    return "".join(f"{k}\t{v}\r\n" if i % 3 == 0 else f"{k}\t{v}\n" for i, (k, v) in enumerate(docs.items()))


def write(path: Path, text: str, members: int = 1) -> Path:
    """``text`` as UTF-8 at ``path``; a ``.gz`` path is gzip, in ``members`` members cut at arbitrary bytes (not
    at line ends)."""
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        cuts = [len(data) * i // members for i in range(members + 1)]
        path.write_bytes(b"".join(gzip.compress(data[a:b], compresslevel=1, mtime=0) for a, b in zip(cuts[:-1], cuts[1:], strict=True)))
    else:
        path.write_bytes(data)
    return path
