"""Building one corpus index: one streaming pass over the file into a folder, the manifest written last.

The pass parses chunks of whole lines in bulk (:mod:`autograde.corpus.parse`), spills the entries into 64 buckets
by the key's top bits and sorts each bucket alone, so its memory is a chunk plus a bucket, never the corpus. Where
the folder goes, and what happens to it on failure or a kill, is :mod:`autograde.corpus.index`'s.
"""

from __future__ import annotations

import time
import uuid
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import file_sha256
from autograde.core.log import Progress
from autograde.core.text import CHUNK_BYTES
from autograde.corpus.parse import chunk_entries
from autograde.corpus.source import CHECKPOINT_BYTES, fingerprint, same_stamp, stream_chunks
from autograde.corpus.store import (
    ENTRIES,
    ENTRY,
    ENTRY_CRCS,
    FENCE,
    FENCES,
    INDEX_FORMAT,
    LENGTH_BITS,
    LINES,
    LONG_LINE,
    MAX_OFFSET,
    PAGE,
    describe_files,
    write_manifest,
)
from autograde.io.corpus import is_tsv

if TYPE_CHECKING:
    from autograde.corpus.passage_store import Capture

BUCKET_BITS = 6


class _LineCounts:
    """Writes lines.u8: the number of newlines before every PAGE-th byte of the stream."""

    def __init__(self, path: Path) -> None:
        self.fh = open(path, "wb")  # closed by close()
        self.next_page = 0

    def add(self, first_line: int, offset: int, newlines: np.ndarray, end: int) -> None:
        pages = np.arange(self.next_page, (end - 1) // PAGE + 1, dtype=np.int64)
        before = np.searchsorted(newlines, np.maximum(pages * PAGE - offset, 0), "left")
        self.fh.write((first_line - 1 + before).astype("<u8").tobytes())
        self.next_page += len(pages)

    def close(self) -> None:
        self.fh.close()


def build_index(path: str, fp: dict[str, Any], folder: Path, problems: Problems, chunk_bytes: int = CHUNK_BYTES,
                checkpoint_bytes: int = CHECKPOINT_BYTES, capture: Capture | None = None) -> dict[str, Any] | None:
    """Stream ``path`` once into a new index in the empty ``folder``; return its manifest, or None when the file has
    problems (they go to ``problems``) or changed while it was read. ``capture``: ids whose lines the pass keeps
    (for the passage store)."""
    start_time = time.perf_counter()
    tsv = is_tsv(path)
    probs = Problems()
    sha256 = file_sha256(path)
    buckets = [open(folder / f"bucket-{b:02d}", "wb") for b in range(1 << BUCKET_BITS)]
    counts = _LineCounts(folder / LINES)
    n_lines, data_start, end = 0, 0, 0
    chunks = stream_chunks(path, probs, chunk_bytes, folder, checkpoint_bytes)
    # a plain file's progress is its MB (offsets are file offsets); a gzip file's decompressed size is unknown
    bar = Progress(None if path.endswith(".gz") else max(1, int(fp["size"]) // 1_000_000), f"indexing corpus {path}",
                   "MB")
    try:
        for first_line, offset, chunk in chunks:
            if first_line == 1:
                data_start = offset  # 3 after a byte order mark
            end = offset + len(chunk)
            bar.update(end // 1_000_000 - bar.done)
            if end > MAX_OFFSET:
                probs.add(path, first_line, f"more than {MAX_OFFSET >> 40} TiB of text in one file",
                          "split the file")
                break
            newlines = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            counts.add(first_line, offset, newlines, end)
            n_lines = first_line - 1 + len(newlines) + (not chunk.endswith(b"\n"))
            e = chunk_entries(chunk, first_line, path, tsv, probs)
            if capture is not None:
                capture.scan(chunk, e.keys, e.starts, e.lengths, e.lines)
            entries = np.empty(len(e.keys), dtype=ENTRY)
            entries["key"] = e.keys
            entries["pos"] = ((offset + e.starts).astype(np.uint64) << np.uint64(LENGTH_BITS)) \
                | np.minimum(e.lengths, LONG_LINE).astype(np.uint64)
            bucket = (e.keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange((1 << BUCKET_BITS) + 1))
            for b in range(1 << BUCKET_BITS):
                if bounds[b + 1] > bounds[b]:
                    buckets[b].write(entries[order[bounds[b]:bounds[b + 1]]].tobytes())
    finally:
        bar.close()
        chunks.close()  # closes the gzip decoder at once, also when the loop stopped early
        for fh in buckets:
            fh.close()
        counts.close()
    if probs:
        problems.extend(probs)
        return None
    after = fingerprint(path)
    if after["size"] != fp["size"] or after["samples_sha256"] != fp["samples_sha256"] \
            or not same_stamp({**after["stamp"], "racy": False}, {**fp["stamp"], "racy": False}):
        problems.add(path, None, "the file changed while its passage index was built",
                     "run again once the file is complete")
        return None
    total = _sort_buckets(folder)
    body = {"format": INDEX_FORMAT, "source": {**fp, "sha256": sha256}, "tsv": tsv,
            "compressed": path.endswith(".gz"), "checkpoint_bytes": checkpoint_bytes, "data_start": data_start, "stream_bytes": end, "entries": total,
            "lines": n_lines, "files": describe_files(folder), "build_id": uuid.uuid4().hex,
            "build_seconds": round(time.perf_counter() - start_time, 3), "built": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    return write_manifest(folder, body)


def _sort_buckets(folder: Path) -> int:
    """Sort each bucket by key (stable: file order among equal keys) into entries.bin; write the fences and the
    crc32 of every block of FENCE entries."""
    fences: list[np.ndarray] = []
    total = 0
    with open(folder / ENTRIES, "wb") as out:
        for b in range(1 << BUCKET_BITS):
            part = folder / f"bucket-{b:02d}"
            entries = np.fromfile(part, dtype=ENTRY)
            part.unlink()
            entries = entries[np.argsort(entries["key"], kind="stable")]
            first = (-total) % FENCE
            fences.append(entries["key"][first::FENCE].copy())
            out.write(entries.tobytes())
            total += len(entries)
    np.concatenate([np.zeros(0, dtype="<u8"), *fences]).astype("<u8").tofile(folder / FENCES)
    block = FENCE * ENTRY.itemsize
    crcs: list[int] = []
    with open(folder / ENTRIES, "rb") as fh:
        while data := fh.read(block * 1024):
            crcs += [zlib.crc32(data[i:i + block]) for i in range(0, len(data), block)]
    np.array(crcs, dtype="<u4").tofile(folder / ENTRY_CRCS)
    return total
