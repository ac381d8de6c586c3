"""The passage store: the texts of the passages once looked up in a corpus file, kept by the file's content.

A dense pool (tens of thousands of ids spread over a ``.gz`` corpus) falls in nearly every gzip checkpoint span, so
its lookup through the index decodes nearly the whole file, every time. The store keeps what a lookup found (and
which ids it asked for, so an id that is in another file is not looked for here again): a later lookup of the same
pool reads the store and opens the index only to check that the file is unchanged.

>>> import json, os, tempfile
>>> from autograde.corpus.lookup import lookup_corpus
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "c.jsonl")
>>> _ = open(p, "w").write(json.dumps({"doc_id": "d1", "text": "Bees make honey."}) + "\\n")
>>> lookup_corpus([p], {"d1", "d9"}, os.path.join(d, "cache"))   # through the index; kept in the store
{'d1': 'Bees make honey.'}
>>> len(os.listdir(os.path.join(d, "cache", "passages")))        # one store: the file's content
1

**Only pooled passages.** The store holds the records of the ids asked for, never a copy of the corpus: a pool of
20,000 passages of a 5 M-passage corpus keeps 20,000 records (``benchmarks/corpus_lookup.py`` measures it).

**Keyed by content.** A store's address is a hash of the sha256 of the whole corpus file, as the file's index
recorded it when it was built; the index is verified against the file at every open (its time stamps, or the
checksum of the whole file when they moved: :mod:`autograde.corpus.index`), so a store is only ever read for the
content it was made from. A changed file gets a new index and so a new store: what the old store held is not used.

**A change invalidates exactly what it must.** Rebuilding the index of a changed file is one pass over it anyway;
that pass also reads the lines of every id the old store held and of the ids being looked up (:class:`Capture`),
so the new store starts with them, read from the new content: a passage whose line changed has its new text, the
others are the same records as before, and no second pass decodes the file. The stores of other corpus files are
untouched; the old store is removed with the old index.

Each lookup that found something new adds one segment ``<sha256 of its bytes>.seg`` (:func:`encode_segment`: every
record's line, id and text; an id asked for and not in the file has line 0 and no text; zlib), written atomically; a
segment is checked against its name when read, and one that fails is removed (its ids are looked up again). More
than :data:`MAX_SEGMENTS` segments are merged into one under the store's lock. Reading the store needs neither
pyarrow nor pandas: a job that only looks up passages starts fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.ids import content_hash, id_keys
from autograde.core.layout import CacheLayout
from autograde.core.log import logger
from autograde.core.text import atomic_write_bytes
from autograde.corpus.locks import file_lock
from autograde.corpus.parse import line_record

STORE_FORMAT = 1
"""Bumped when the segments' form changes (a new format is a new address: old stores are simply not read)."""
MAX_SEGMENTS = 8
"""Segments a store keeps before they are merged into one."""
LOCK = ".lock"
SUFFIX = ".seg"

Record = tuple[int, str, str]
"""``(line, doc_id, text)`` of one record of the corpus file (what :func:`autograde.corpus.lookup.lookup_index`
returns)."""


def store_address(manifest: dict[str, Any]) -> str:
    """The address of the store of the content an index manifest describes."""
    return content_hash({"format": STORE_FORMAT, "sha256": manifest["source"]["sha256"], "tsv": manifest["tsv"]}, 32)


@dataclass
class Capture:
    """Ids whose lines an index build collects on its way through the file (the build's one pass), so that their
    records need no second pass: the ids a lookup wants, and those the store of the file's previous content held."""

    ids: set[str]
    keys: np.ndarray = field(init=False)
    lines: list[tuple[int, bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.keys = np.unique(id_keys(sorted(self.ids)))

    def extend(self, ids: Iterable[str]) -> None:
        self.ids |= set(ids)
        self.keys = np.unique(id_keys(sorted(self.ids)))

    def scan(self, chunk: bytes, keys: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
             lines: np.ndarray) -> None:
        """Keep the lines of one chunk whose id key is wanted (keys collide rarely: the id is checked later)."""
        if not len(self.keys) or not len(keys):
            return
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        for i in np.flatnonzero(self.keys[at] == keys).tolist():
            s = int(starts[i])
            self.lines.append((int(lines[i]), chunk[s:s + int(lengths[i])]))

    def records(self, source: str, tsv: bool) -> list[Record]:
        """The records of the kept lines whose id is wanted (a line of another id with the same key is dropped)."""
        out: list[Record] = []
        for n, raw in self.lines:
            doc = line_record(source, tsv, raw)
            if doc is not None and doc[0] in self.ids:
                out.append((n, doc[0], doc[1]))
        return out


Row = tuple[int, str, str | None]
"""One stored row: a record, or ``(0, doc_id, None)`` for an id asked for that is not in the file."""
MAGIC = b"autograde-passages-1\n"


def encode_segment(rows: Sequence[Row]) -> bytes:
    """Rows as one segment: the magic line, then zlib of (row count, lines, id and text lengths, ids, texts)."""
    ids = [r[1].encode("utf-8") for r in rows]
    texts = [(r[2] or "").encode("utf-8") for r in rows]
    lengths = np.array([[len(i), len(t) if r[2] is not None else -1] for i, t, r in zip(ids, texts, rows, strict=True)],
                       dtype="<i4").reshape(-1, 2)
    body = b"".join([np.array([len(rows)], dtype="<u8").tobytes(), np.array([r[0] for r in rows], dtype="<i8").tobytes(),
                     lengths.tobytes(), *ids, *texts])
    return MAGIC + zlib.compress(body, 1)


def decode_segment(data: bytes) -> list[Row] | None:
    """The rows of one segment; None when it is not a whole segment (its checksum is checked by the reader)."""
    if not data.startswith(MAGIC):
        return None
    try:
        body = zlib.decompress(data[len(MAGIC):])
    except zlib.error:
        return None
    if len(body) < 8:
        return None
    n = int(np.frombuffer(body, dtype="<u8", count=1)[0])
    if len(body) < 8 + 16 * n:
        return None
    lines = np.frombuffer(body, dtype="<i8", count=n, offset=8).tolist()
    lengths = np.frombuffer(body, dtype="<i4", count=2 * n, offset=8 + 8 * n).reshape(-1, 2)
    start = 8 + 16 * n
    id_ends = start + np.cumsum(lengths[:, 0])
    text_ends = int(id_ends[-1] if n else start) + np.cumsum(np.maximum(lengths[:, 1], 0))
    if int(text_ends[-1] if n else start) != len(body):
        return None
    rows: list[Row] = []
    id_start, text_start = start, int(id_ends[-1]) if n else start
    for line, id_end, (_, text_len), text_end in zip(lines, id_ends.tolist(), lengths.tolist(), text_ends.tolist(),
                                                     strict=True):
        text = body[text_start:text_end].decode("utf-8") if text_len >= 0 else None
        rows.append((line, body[id_start:id_end].decode("utf-8"), text))
        id_start, text_start = id_end, text_end
    return rows


class PassageStore:
    """The stored records of one corpus file's content (``<cache_dir>/passages/<address>/``)."""

    def __init__(self, cache_dir: str | Path, manifest: dict[str, Any]) -> None:
        self.folder = Path(CacheLayout.of(cache_dir).passages(store_address(manifest)))

    def segments(self) -> list[Path]:
        try:
            return sorted(self.folder.glob("*" + SUFFIX))
        except OSError:
            return []

    def _read(self, path: Path) -> list[Row]:
        """One segment's rows; none when it is gone, or damaged (then it is removed)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # merged away by another job meanwhile: its records are in the merged segment
            return []
        except OSError as exc:
            logger.warning("passage store: %s cannot be read (%s): its passages are looked up again", path, exc)
            return []
        why = "its content does not match its name"
        if hashlib.sha256(data).hexdigest()[:32] == path.name[:-len(SUFFIX)]:
            try:
                rows = decode_segment(data)
            except UnicodeDecodeError:
                rows = None
            if rows is not None:
                return rows
            why = "it is not a whole segment"
        logger.warning("passage store: %s is damaged (%s): removed, its passages are looked up again", path, why)
        with contextlib.suppress(OSError):
            path.unlink()
        return []

    def rows(self) -> dict[str, list[Row]]:
        """Every stored id and its rows, from one segment only (each segment holds all records of its ids)."""
        out: dict[str, list[Row]] = {}
        for path in self.segments():
            mine: dict[str, list[Row]] = {}
            for row in self._read(path):
                if row[1] not in out:
                    mine.setdefault(row[1], []).append(row)
            out.update(mine)
        return out

    def get(self, ids: list[str]) -> tuple[list[Record], list[str]]:
        """``(records of the ids the store knows, ids it does not know)``; an id it knows may have no record (it is
        not in this file)."""
        stored = self.rows()
        records = [(n, d, t) for i in ids for n, d, t in stored.get(i, ()) if t is not None]
        return records, [i for i in ids if i not in stored]

    def asked(self) -> list[str]:
        """Every id the store knows (found in the file or not)."""
        return sorted(self.rows())

    def add(self, asked: Iterable[str], records: list[Record]) -> None:
        """Keep the records found for the ``asked`` ids (those without a record: not in the file). A cache that
        cannot be written is no error: the next lookup goes through the index again."""
        asked = set(asked)
        found = {doc_id for _, doc_id, _ in records}
        rows: list[Row] = [*sorted(r for r in records if r[1] in asked), *((0, i, None) for i in sorted(asked - found))]
        if not rows:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._write(rows)
            if len(self.segments()) > MAX_SEGMENTS:
                self.merge()
        except OSError as exc:
            logger.warning("passage store: cannot write %s (%s): the passages are looked up through the corpus index "
                           "next time", self.folder, exc.strerror or exc)

    def _write(self, rows: Sequence[Row]) -> Path:
        data = encode_segment(rows)
        path = self.folder / f"{hashlib.sha256(data).hexdigest()[:32]}{SUFFIX}"
        atomic_write_bytes(path, data)
        return path

    def merge(self) -> None:
        """All segments into one (under the store's lock; a job that finds it held leaves the merge to the holder)."""
        with file_lock(self.folder / LOCK, wait=False) as held:
            if not held:
                return
            before = self.segments()
            if len(before) < 2:
                return
            merged = self._write([row for rows in self.rows().values() for row in rows])
            for path in before:
                if path != merged:
                    with contextlib.suppress(OSError):
                        path.unlink()

    def size(self) -> int:
        """Bytes on disk."""
        return sum(p.stat().st_size for p in self.segments())


def remove_store(cache_dir: str | Path, manifest: dict[str, Any]) -> None:
    """Remove the store of one content (its index is gone: the content changed)."""
    shutil.rmtree(CacheLayout.of(cache_dir).passages(store_address(manifest)), ignore_errors=True)
