"""Passage text by id through the corpus index: read only the wanted lines, never the whole corpus.

>>> import json, os, tempfile
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "c.jsonl")
>>> _ = open(p, "w").write(json.dumps({"doc_id": "d1", "text": "Bees make honey."}) + "\\n")
>>> lookup_corpus([p], {"d1", "nope"}, os.path.join(d, "cache"))
{'d1': 'Bees make honey.'}

Memory: the wanted ids, the fences (one key in 256) and the texts found; the index and the corpus stay on disk
(read with ``pread``, not mapped), so a lookup's peak memory does not grow with the corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import id_keys
from autograde.core.log import progress
from autograde.corpus.index import ENTRY, FENCE, CorpusIndex, open_index
from autograde.io.corpus import DocCollector, doc_from_json, doc_from_tsv


def find_entries(index: CorpusIndex, keys: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(position in keys, matching entries)`` for every key found in the index (all entries with that key)."""
    fences = np.load(index.folder / "fences.npy")
    n = int(index.manifest["entries"])
    if not n or not len(keys):
        return []
    lo = np.maximum(np.searchsorted(fences, keys, "left") - 1, 0)
    hi = np.searchsorted(fences, keys, "right")
    order = np.lexsort((hi, lo))
    groups: list[tuple[int, int, np.ndarray]] = []  # (first entry, end entry, positions in keys) per index block
    i = 0
    while i < len(order):
        a, b = int(lo[order[i]]), int(hi[order[i]])
        j = i
        while j < len(order) and lo[order[j]] == a and hi[order[j]] == b:
            j += 1
        groups.append((a * FENCE, min(b * FENCE, n), order[i:j]))
        i = j
    out: list[tuple[int, np.ndarray]] = []
    fd = os.open(index.folder / "entries.bin", os.O_RDONLY)
    try:
        if hasattr(os, "posix_fadvise"):  # start every read at once (a cold page cache serves them in parallel)
            for start, stop, _group in groups:
                os.posix_fadvise(fd, start * ENTRY.itemsize, (stop - start) * ENTRY.itemsize, os.POSIX_FADV_WILLNEED)
        for start, stop, group in groups:
            block = np.frombuffer(os.pread(fd, (stop - start) * ENTRY.itemsize, start * ENTRY.itemsize), dtype=ENTRY)
            left = np.searchsorted(block["key"], keys[group], "left")
            right = np.searchsorted(block["key"], keys[group], "right")
            for pos, lft, rgt in zip(group.tolist(), left.tolist(), right.tolist(), strict=True):
                if rgt > lft:
                    out.append((pos, block[lft:rgt].copy()))  # a copy: a view would keep the whole block alive
    finally:
        os.close(fd)
    return out


class _Reader:
    """Reads lines at index locations: from the file itself, or from the LZ4 blocks of a gzip source."""

    def __init__(self, index: CorpusIndex) -> None:
        self.index = index
        if index.compressed:
            self.fd = os.open(index.folder / "blocks.lz4", os.O_RDONLY)
            self.offsets_fd = os.open(index.folder / "blocks.u8", os.O_RDONLY)
        else:
            self.fd = os.open(index.source, os.O_RDONLY)
        self.block_no = -1
        self.block = b""

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Ask the kernel to start reading every wanted line (or block) at once: on a cold page cache the reads
        then overlap instead of waiting one after another."""
        if not hasattr(os, "posix_fadvise"):
            return
        if not self.index.compressed:
            for loc, length in spans:
                os.posix_fadvise(self.fd, loc, length, os.POSIX_FADV_WILLNEED)
            return
        blocks = sorted({loc >> 32 for loc, _length in spans})
        for block_no in blocks:
            a, b = np.frombuffer(os.pread(self.offsets_fd, 16, block_no * 8), dtype=np.uint64).tolist()
            os.posix_fadvise(self.fd, a, b - a, os.POSIX_FADV_WILLNEED)

    def read(self, loc: int, length: int) -> bytes:
        if not self.index.compressed:
            return os.pread(self.fd, length, loc)
        import lz4.block

        block_no, at = loc >> 32, loc & 0xFFFFFFFF
        if block_no != self.block_no:
            a, b = np.frombuffer(os.pread(self.offsets_fd, 16, block_no * 8), dtype=np.uint64).tolist()
            self.block = lz4.block.decompress(os.pread(self.fd, b - a, a))
            self.block_no = block_no
        return self.block[at:at + length]

    def close(self) -> None:
        os.close(self.fd)
        if self.index.compressed:
            os.close(self.offsets_fd)


def _parse(index: CorpusIndex, n: int, raw: bytes, probs: Problems) -> tuple[str, str] | None:
    """The record of one line; None (with a problem naming the stale index) when the line is not a record."""
    try:
        line = raw.decode("utf-8").rstrip("\r")
        if index.tsv:
            return doc_from_tsv(index.source, n, line, probs)
        rec = json.loads(line)  # checked when the index was built (duplicate keys included): no strict hook
        if isinstance(rec, dict):
            return doc_from_json(index.source, n, rec, probs)
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    probs.add(index.source, n, f"the corpus index {index.folder} does not match the file (changed in place?)",
              f"delete {index.folder}; it is rebuilt on the next run")
    return None


def lookup_index(index: CorpusIndex, wanted: list[str], keys: np.ndarray, probs: Problems
                 ) -> list[tuple[int, str, str]]:
    """``(line, doc_id, text)`` of every record of ``wanted`` in one indexed file, in file order."""
    hits = [(pos, e) for pos, entries in find_entries(index, keys) for e in entries]
    hits.sort(key=lambda h: int(h[1]["loc"]))
    found: list[tuple[int, str, str]] = []
    reader = _Reader(index)
    try:
        reader.prefetch([(int(e["loc"]), int(e["length"])) for _pos, e in hits])
        for pos, e in progress(hits, desc=f"reading passages of {index.source}", unit="passages"):
            n = int(e["line"])
            doc = _parse(index, n, reader.read(int(e["loc"]), int(e["length"])), probs)
            if doc is not None and doc[0] == wanted[pos]:  # another id with the same key is skipped
                found.append((n, doc[0], doc[1]))
    finally:
        reader.close()
    found.sort()
    return found


def lookup_corpus(paths: Iterable[str | Path], wanted: set[str], cache_dir: str | Path,
                  problems: Problems | None = None) -> dict[str, str]:
    """Texts of the ``wanted`` ids in the corpus files, through their indexes (built on first use).

    The same result and the same problems as :func:`autograde.io.corpus.read_corpus` with ``wanted``: empty texts
    and an id repeated with another text are problems naming file and line; malformed lines are reported when the
    index is built. Ids that are in no file are simply absent.
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    ids = sorted(wanted)
    keys = id_keys(ids)
    found = DocCollector(probs)
    for path in paths:
        index = open_index(path, cache_dir, probs)
        if index is None or not ids:
            continue
        for n, doc_id, text in lookup_index(index, ids, keys, probs):
            found.add(index.source, n, doc_id, text)
    out = found.finish()
    if own:
        probs.raise_if_any()
    return out
