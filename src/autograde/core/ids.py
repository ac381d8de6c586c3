"""The one place for identifiers and content hashes.

>>> item_id("940547", "Which musicians or bands are considered pioneers of rock n roll?")
'940547/a4c82219840e6d197d185ed1eda27c61'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def md5_text(text: str) -> str:
    """Hex md5 of UTF-8 text (the workbench's id hash)."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def item_id(query_id: str, text: str, facet_id: str | None = None) -> str:
    """Test-bank item id ``query_id[/facet_id]/md5(text.strip())``, the workbench's scheme."""
    digest = md5_text(text.strip())
    if facet_id:
        return f"{query_id}/{facet_id}/{digest}"
    return f"{query_id}/{digest}"


def passage_id_for_text(text: str) -> str:
    """Passage id of a passage cut from a generated answer: md5 of its text."""
    return md5_text(text)


PairKey = tuple[str, str]
"""A (query id, passage id) pair: the key of a passage label or judgment."""
NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A name that names output files: a grader, an assessor, a generated bank."""


def canonical_json(value: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace, UTF-8 kept) used for every content hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: Any, length: int = 32) -> str:
    """sha256 of the canonical JSON of ``value``, hex, truncated to ``length`` characters."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def file_sha256(path: str, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes (model files, inputs)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3


def fnv1a64_spans(data: Any, starts: Any, lengths: Any) -> Any:
    """64-bit FNV-1a of byte spans of ``data`` (numpy, no Python object per span): the corpus index's id keys.

    ``data`` is a uint8 array, ``starts``/``lengths`` int64 arrays of the spans. Vectorised over spans, one step
    per byte position, so hashing millions of ids costs a few numpy passes.

    >>> import numpy as np
    >>> hex(int(fnv1a64_spans(np.frombuffer(b"a", np.uint8), np.array([0]), np.array([1]))[0]))
    '0xaf63dc4c8601ec8c'
    """
    import numpy as np

    n = len(starts)
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    order = np.argsort(-lengths, kind="stable")  # longest first: the spans still active at byte j are a prefix
    s = starts[order].astype(np.int64)
    ln = lengths[order]
    h = np.full(n, FNV64_OFFSET, dtype=np.uint64)
    prime = np.uint64(FNV64_PRIME)
    active = n
    for j in range(int(ln[0]) if n else 0):
        while active and ln[active - 1] <= j:
            active -= 1
        h[:active] ^= data[s[:active] + j].astype(np.uint64)
        h[:active] *= prime
    out[order] = h
    return out


def id_keys(ids: list[str]) -> Any:
    """:func:`fnv1a64_spans` of each id's UTF-8 bytes (the lookup side of the corpus index)."""
    import numpy as np

    encoded = [i.encode("utf-8") for i in ids]
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    starts = np.zeros(len(encoded), dtype=np.int64)
    if len(encoded) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return fnv1a64_spans(np.frombuffer(b"".join(encoded), dtype=np.uint8), starts, lengths)
