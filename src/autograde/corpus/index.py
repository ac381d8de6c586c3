"""The corpus index: doc id -> where its line is, built once per corpus file, next to the grade cache.

Layout of one index (``<cache_dir>/corpus-index/<address>/``; the address is a content hash of the file's
fingerprint, see :func:`fingerprint`)::

    manifest.json   the source file, its fingerprint, counts, format version, how long the build took
    entries.bin     one 24-byte entry per record, sorted by key: key (FNV-1a 64 of the id), location, line, length
    fences.npy      every FENCE-th key (a lookup reads only the few entries between two fences)
    blocks.lz4      gzip sources only: the decompressed lines re-compressed in independent ~32 KiB LZ4 blocks
    blocks.u8       gzip sources only: byte offset of every block in blocks.lz4 (and the end)

A plain file's location is the byte offset of the line in the file itself (nothing is copied). A gzip file has no
random access, so the build converts it once into ``blocks.lz4`` (about the size of the gzip file again) and a
location is ``block << 32 | offset in the block``; a lookup decompresses only the blocks that hold wanted lines.

The build streams the file once in chunks (:mod:`autograde.corpus.parse`), spills entries into 64 buckets by the
key's top bits and sorts each bucket alone, so its memory is a chunk plus a bucket, never the corpus. Writes go to a
temporary folder renamed into place at the end (atomic; a concurrent build of the same file loses the race
harmlessly). When the corpus file changes (size, modification time, or its first and last 64 KiB), its address
changes: the index is rebuilt, with a log line saying so, and the stale one is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import content_hash
from autograde.core.layout import CacheLayout
from autograde.core.log import Progress, logger
from autograde.core.text import CHUNK_BYTES, atomic_write_text, iter_chunks
from autograde.corpus.parse import chunk_entries
from autograde.io.corpus import is_tsv

INDEX_FORMAT = 1
"""Bumped when the layout changes (a new format is a new address: old indexes are simply not used)."""
ENTRY = np.dtype([("key", "<u8"), ("loc", "<u8"), ("line", "<u4"), ("length", "<u4")])
FENCE = 256
BUCKET_BITS = 6
BLOCK_BYTES = 32 << 10
EDGE_BYTES = 64 << 10


@dataclass(frozen=True)
class CorpusIndex:
    """An index on disk and the corpus file it indexes."""

    source: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def compressed(self) -> bool:
        return bool(self.manifest.get("compressed"))

    @property
    def tsv(self) -> bool:
        return bool(self.manifest.get("tsv"))


def fingerprint(path: str | Path) -> dict[str, Any]:
    """What identifies a corpus file's content without reading all of it: its real path, size, modification time
    and the sha256 of its first and last 64 KiB."""
    p = Path(path).resolve()
    st = p.stat()
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        h.update(fh.read(EDGE_BYTES))
        if st.st_size > EDGE_BYTES:
            fh.seek(max(st.st_size - EDGE_BYTES, EDGE_BYTES))
            h.update(fh.read(EDGE_BYTES))
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "edges_sha256": h.hexdigest()}


def index_root(cache_dir: str | Path) -> Path:
    return Path(CacheLayout.of(cache_dir).corpus_index)


def index_folder(cache_dir: str | Path, fp: dict[str, Any]) -> Path:
    """The content address of a corpus file's index."""
    return index_root(cache_dir) / content_hash({"format": INDEX_FORMAT, **fp}, 32)


def _stale(root: Path, source: str, keep: Path) -> list[Path]:
    """Other indexes of the same source path (built before the file changed)."""
    out = []
    for manifest in root.glob("*/manifest.json"):
        if manifest.parent == keep:
            continue
        try:
            if json.loads(manifest.read_text())["fingerprint"]["path"] == source:
                out.append(manifest.parent)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def open_index(path: str | Path, cache_dir: str | Path, problems: Problems) -> CorpusIndex | None:
    """The index of one corpus file, built first when missing or out of date; None when the file has problems."""
    p = str(path)
    try:
        fp = fingerprint(p)
    except FileNotFoundError:
        problems.add(p, None, "corpus file not found", "check data.corpus")
        return None
    except IsADirectoryError:
        problems.add(p, None, "is a folder, not a corpus file", "name the file")
        return None
    folder = index_folder(cache_dir, fp)
    manifest = folder / "manifest.json"
    if manifest.is_file():
        return CorpusIndex(p, folder, json.loads(manifest.read_text()))
    stale = _stale(index_root(cache_dir), fp["path"], folder)
    if stale:
        logger.info("corpus %s changed since its index was built (size, time or content differ): rebuilding it in %s",
                    p, folder)
    else:
        logger.info("corpus %s: building its passage index in %s (once per corpus file; %.0f MB to read)", p, folder,
                    fp["size"] / 1e6)
    if not build_index(p, fp, folder, problems):
        return None
    for old in stale:
        shutil.rmtree(old, ignore_errors=True)
    return CorpusIndex(p, folder, json.loads(manifest.read_text()))


class _BlockWriter:
    """Re-compresses decompressed lines into independent LZ4 blocks (gzip sources)."""

    def __init__(self, folder: Path) -> None:
        self.store = open(folder / "blocks.lz4", "wb")  # closed by close()
        self.offsets = open(folder / "blocks.u8", "wb")
        self.blocks = 0
        self.written = 0

    def add(self, chunk: bytes, line_ends: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Write ``chunk`` (whole lines) as blocks cut at line ends; return the location of each start."""
        import lz4.block

        targets = np.arange(BLOCK_BYTES, len(chunk), BLOCK_BYTES)
        cuts = np.unique(line_ends[np.minimum(np.searchsorted(line_ends, targets), len(line_ends) - 1)]) \
            if len(targets) and len(line_ends) else np.zeros(0, dtype=np.int64)
        bounds = np.concatenate(([0], cuts[cuts < len(chunk)], [len(chunk)])).astype(np.int64)
        offsets = np.empty(len(bounds) - 1, dtype=np.uint64)
        for i in range(len(bounds) - 1):
            data = lz4.block.compress(chunk[bounds[i]:bounds[i + 1]], store_size=True)
            offsets[i] = self.written
            self.store.write(data)
            self.written += len(data)
        self.offsets.write(offsets.tobytes())
        block = np.searchsorted(bounds, starts, "right") - 1
        locs = ((self.blocks + block).astype(np.uint64) << np.uint64(32)) | (starts - bounds[block]).astype(np.uint64)
        self.blocks += len(bounds) - 1
        return locs

    def close(self) -> None:
        self.offsets.write(np.array([self.written], dtype=np.uint64).tobytes())
        self.store.close()
        self.offsets.close()


def build_index(path: str, fp: dict[str, Any], folder: Path, problems: Problems, chunk_bytes: int = CHUNK_BYTES
                ) -> bool:
    """Stream ``path`` once into a new index at ``folder``; False (nothing written) when the file has problems."""
    start_time = time.perf_counter()
    tmp = folder.parent / f".tmp-{folder.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tsv, compressed = is_tsv(path), path.endswith(".gz")
    probs = Problems()
    buckets = [open(tmp / f"bucket-{b:02d}", "wb") for b in range(1 << BUCKET_BITS)]
    blocks = _BlockWriter(tmp) if compressed else None
    n_lines = 0
    # a plain file's progress is its bytes (offsets are file offsets); a gzip file's decompressed size is unknown
    bar = Progress(None if compressed else max(1, fp["size"] // 1_000_000), f"indexing corpus {path}", "MB")
    try:
        for first_line, offset, chunk in iter_chunks(path, probs, chunk_bytes):
            bar.update((offset + len(chunk)) // 1_000_000 - bar.done)
            e = chunk_entries(chunk, first_line, path, tsv, probs)
            n_lines = first_line - 1 + chunk.count(b"\n")
            if blocks is not None:
                arr = np.frombuffer(chunk, dtype=np.uint8)
                locs = blocks.add(chunk, np.flatnonzero(arr == 10) + 1, e.starts)
            else:
                locs = (offset + e.starts).astype(np.uint64)
            entries = np.empty(len(e.keys), dtype=ENTRY)
            entries["key"], entries["loc"] = e.keys, locs
            entries["line"], entries["length"] = e.lines, e.lengths
            bucket = (e.keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange((1 << BUCKET_BITS) + 1))
            for b in range(1 << BUCKET_BITS):
                if bounds[b + 1] > bounds[b]:
                    buckets[b].write(entries[order[bounds[b]:bounds[b + 1]]].tobytes())
    finally:
        bar.close()
        for fh in buckets:
            fh.close()
        if blocks is not None:
            blocks.close()
    if probs:
        problems.extend(probs)
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    total = _sort_buckets(tmp)
    manifest = {"format": INDEX_FORMAT, "fingerprint": fp, "tsv": tsv, "compressed": compressed, "entries": total,
                "lines": n_lines, "build_seconds": round(time.perf_counter() - start_time, 3),
                "built": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    atomic_write_text(tmp / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    try:
        os.rename(tmp, folder)
    except OSError:  # built concurrently by another job: theirs is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)
        if not (folder / "manifest.json").is_file():
            raise
    logger.info("corpus %s: indexed %d passages in %.1f s", path, total, manifest["build_seconds"])
    return True


def _sort_buckets(tmp: Path) -> int:
    """Sort each bucket by key (stable: file order among equal keys) into entries.bin; write the fences."""
    fences: list[np.ndarray] = []
    total = 0
    with open(tmp / "entries.bin", "wb") as out:
        for b in range(1 << BUCKET_BITS):
            part = tmp / f"bucket-{b:02d}"
            entries = np.fromfile(part, dtype=ENTRY)
            part.unlink()
            entries = entries[np.argsort(entries["key"], kind="stable")]
            first = (-total) % FENCE
            fences.append(entries["key"][first::FENCE].copy())
            out.write(entries.tobytes())
            total += len(entries)
    np.save(tmp / "fences.npy", np.concatenate(fences) if fences else np.zeros(0, dtype=np.uint64))
    return total
