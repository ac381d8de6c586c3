"""Passage text by id through the corpus index: read only the wanted lines, never the whole corpus.

>>> import json, os, tempfile
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "c.jsonl")
>>> _ = open(p, "w").write(json.dumps({"doc_id": "d1", "text": "Bees make honey."}) + "\\n")
>>> lookup_corpus([p], {"d1", "nope"}, os.path.join(d, "cache"))
{'d1': 'Bees make honey.'}

Every block of entries read is checked against its crc32, and every line read back against its entry (a whole line
of the recorded length, with the id the entry was made for): a mismatch rebuilds the index and looks up again
(:mod:`autograde.corpus.index` has the whole design). Memory: the wanted ids, the fences (one key in 256), the
gzip checkpoints of a ``.gz`` file (compressed) and the decoder's buffers and the texts found; the entries and the corpus stay on
disk (read with ``pread`` or from the nearest checkpoint, not mapped).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import id_keys
from autograde.core.log import progress
from autograde.corpus.index import open_index
from autograde.corpus.parse import line_record
from autograde.corpus.passage_store import Capture, PassageStore
from autograde.corpus.source import LineReader
from autograde.corpus.store import (
    ENTRIES,
    ENTRY,
    ENTRY_CRCS,
    FENCE,
    FENCES,
    LENGTH_BITS,
    LINES,
    LONG_LINE,
    PAGE,
    CorpusIndex,
    StaleIndexError,
)
from autograde.io.corpus import DocCollector

BATCH = 256
"""Keys looked up at once: their entry blocks (4 KiB each, two where a key is a fence) are read together."""


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(start, start + count)`` for each pair (numpy, no loop)."""
    total = int(counts.sum())
    return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total, dtype=np.int64)


def find_entries(index: CorpusIndex, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(positions in keys, entries)`` of every entry whose key is in ``keys`` (all entries with that key).

    Keys are taken in sorted batches; a batch reads the entry blocks its keys fall in (each checked against its
    crc32) and searches them at once, so memory is a batch of blocks, never the entries file.
    """
    n = index.entries
    positions: list[np.ndarray] = []
    found: list[np.ndarray] = []
    if not n or not len(keys):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=ENTRY)
    fences = np.fromfile(index.folder / FENCES, dtype="<u8")
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    lo = np.maximum(np.searchsorted(fences, sorted_keys, "left") - 1, 0)
    hi = np.searchsorted(fences, sorted_keys, "right")
    block_bytes = FENCE * ENTRY.itemsize
    fd = os.open(index.folder / ENTRIES, os.O_RDONLY)
    crc_fd = os.open(index.folder / ENTRY_CRCS, os.O_RDONLY)
    try:
        for s in range(0, len(sorted_keys), BATCH):
            batch = slice(s, s + BATCH)
            blocks = np.unique(_ranges(lo[batch], hi[batch] - lo[batch]))
            cuts = np.flatnonzero(np.diff(blocks) != 1) + 1
            runs = [(int(r[0]), int(r[-1]) + 1) for r in np.split(blocks, cuts) if len(r)]
            if hasattr(os, "posix_fadvise"):  # start every read at once (a cold page cache serves them in parallel)
                for a, b in runs:
                    os.posix_fadvise(fd, a * block_bytes, (b - a) * block_bytes, os.POSIX_FADV_WILLNEED)
            parts = []
            for a, b in runs:
                want = (min(b * FENCE, n) - a * FENCE) * ENTRY.itemsize
                raw = os.pread(fd, want, a * block_bytes)
                crcs = np.frombuffer(os.pread(crc_fd, (b - a) * 4, a * 4), dtype="<u4").tolist()
                if len(raw) != want or len(crcs) != b - a or any(
                        zlib.crc32(raw[k * block_bytes:(k + 1) * block_bytes]) != c for k, c in enumerate(crcs)):
                    raise StaleIndexError(f"{ENTRIES} is damaged (blocks {a} to {b - 1})")
                parts.append(raw)
            table = np.frombuffer(b"".join(parts), dtype=ENTRY)
            left = np.searchsorted(table["key"], sorted_keys[batch], "left")
            counts = np.searchsorted(table["key"], sorted_keys[batch], "right") - left
            positions.append(np.repeat(order[batch], counts))
            found.append(table[_ranges(left, counts)])  # a copy: the blocks are not kept
    finally:
        os.close(fd)
        os.close(crc_fd)
    return np.concatenate(positions), np.concatenate(found)


def _fetch(reader: LineReader, index: CorpusIndex, offset: int, length: int) -> tuple[bytes, int]:
    """The line at ``offset`` and the newlines between its page's start and it; a line that is not where, or not
    as long as, its entry says is a :class:`StaleIndexError`."""
    page_start = offset - offset % PAGE
    start = min(page_start, offset - 1) if offset > 0 else 0
    data = reader.read(start, offset + length + 1 - start)
    end = offset + length
    if length == LONG_LINE:  # at least that long: read on to the newline
        while (cut := data.find(b"\n", end - start)) < 0:
            more = reader.read(start + len(data), 1 << 20)
            if not more:
                break
            data += more
        end = start + cut if cut >= 0 else start + len(data)
    rel = end - start
    if len(data) < rel or not (data[rel:rel + 1] == b"\n" or end == int(index.manifest["stream_bytes"])) or not (
            offset == int(index.manifest["data_start"]) or (offset > 0 and data[offset - 1 - start] == 10)):
        raise StaleIndexError(f"no line of {length} bytes at byte {offset}")
    return data[offset - start:rel], data.count(b"\n", page_start - start, offset - start)


def _record(index: CorpusIndex, raw: bytes) -> tuple[str, str]:
    """The record of one line (a line the build accepted: anything else means the file changed)."""
    doc = line_record(index.source, index.tsv, raw)
    if doc is None:
        raise StaleIndexError("a line its index points to is not a record")
    return doc


def lookup_index(index: CorpusIndex, wanted: list[str], keys: np.ndarray) -> list[tuple[int, str, str]]:
    """``(line, doc_id, text)`` of every record of ``wanted`` in one indexed file, in file order; raises
    :class:`StaleIndexError` when the index does not match the file (or its files went away meanwhile)."""
    try:
        return _lookup_index(index, wanted, keys)
    except OSError as exc:
        raise StaleIndexError(f"its files cannot be read ({exc.strerror or exc})") from None


def _lookup_index(index: CorpusIndex, wanted: list[str], keys: np.ndarray) -> list[tuple[int, str, str]]:
    positions, entries = find_entries(index, keys)
    offsets, lengths = entries["pos"] >> np.uint64(LENGTH_BITS), entries["pos"] & np.uint64(LONG_LINE)
    order = np.lexsort((positions, offsets))
    hits = list(zip(offsets[order].tolist(), lengths[order].tolist(), positions[order].tolist(),
                    entries["key"][order].tolist(), strict=True))
    found: list[tuple[int, str, str]] = []
    if not hits:
        return found
    reader = LineReader(index.source, index.folder, index.compressed, int(index.manifest["checkpoint_bytes"]))
    lines_fd = os.open(index.folder / LINES, os.O_RDONLY)
    try:
        reader.prefetch([(max(off - off % PAGE - 1, 0), off % PAGE + length + 2) for off, length, _p, _k in hits])
        for offset, length, pos, key in progress(hits, desc=f"reading passages of {index.source}", unit="passages"):
            raw, newlines = _fetch(reader, index, offset, length)
            before = np.frombuffer(os.pread(lines_fd, 8, offset // PAGE * 8), dtype="<u8")
            if len(before) != 1:
                raise StaleIndexError(f"{LINES} is shorter than the file")
            doc_id, text = _record(index, raw)
            if doc_id == wanted[pos]:
                found.append((1 + int(before[0]) + newlines, doc_id, text))
            elif int(id_keys([doc_id])[0]) != key:  # not another id with the same key: the file changed
                raise StaleIndexError(f"the line at byte {offset} holds {doc_id!r}, not the id its entry was made for")
    finally:
        reader.close()
        os.close(lines_fd)
    found.sort()
    return found


def lookup_stored(index: CorpusIndex, wanted: list[str], cache_dir: str | Path) -> list[tuple[int, str, str]]:
    """``(line, doc_id, text)`` of every record of ``wanted`` in one indexed file, in file order: what the file's
    passage store holds, and the rest through the index (then kept in the store). Raises
    :class:`StaleIndexError` as :func:`lookup_index` does."""
    store = PassageStore(cache_dir, index.manifest)
    records, missing = store.get(wanted)
    if missing:
        more = lookup_index(index, missing, id_keys(missing))
        store.add(missing, more)
        records += more
    return sorted(records)


def lookup_corpus(paths: Iterable[str | Path], wanted: set[str], cache_dir: str | Path,
                  problems: Problems | None = None) -> dict[str, str]:
    """Texts of the ``wanted`` ids in the corpus files, through their passage stores and indexes (an index is built
    on first use and rebuilt when it does not match the file; what a lookup finds is kept in the store of the file's
    content: :mod:`autograde.corpus.passage_store`).

    The same result and the same problems as :func:`autograde.io.corpus.read_corpus` with ``wanted``: empty texts
    and an id repeated with another text are problems naming file and line; malformed lines are reported when the
    index is built. Ids that are in no file are simply absent.
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    ids = sorted(wanted)
    found = DocCollector(probs)
    for path in paths:
        index = open_index(path, cache_dir, probs, capture=Capture(set(ids)))
        if index is None or not ids:
            continue
        try:
            records = lookup_stored(index, ids, cache_dir)
        except StaleIndexError as exc:
            index = open_index(path, cache_dir, probs, stale=(index, str(exc)), capture=Capture(set(ids)))
            if index is None:
                continue
            try:
                records = lookup_stored(index, ids, cache_dir)
            except StaleIndexError as again:
                probs.add(index.source, None, f"the file changed while its passages were read ({again})",
                          "run again once the file no longer changes")
                continue
        for n, doc_id, text in records:
            found.add(index.source, n, doc_id, text)
    out = found.finish()
    if own:
        probs.raise_if_any()
    return out
