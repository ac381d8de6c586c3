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

Each lookup that found something new adds one segment ``<sha256 of its bytes>.parquet`` (columns ``doc_id``,
``line``, ``text``; an id asked for and not in the file has line 0 and no text), written atomically; a segment is
checked against its name when read, and one that fails is removed (its ids are looked up again). More than
:data:`MAX_SEGMENTS` segments are merged into one under the store's lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
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


class PassageStore:
    """The stored records of one corpus file's content (``<cache_dir>/passages/<address>/``)."""

    def __init__(self, cache_dir: str | Path, manifest: dict[str, Any]) -> None:
        self.folder = Path(CacheLayout.of(cache_dir).passages(store_address(manifest)))

    def segments(self) -> list[Path]:
        try:
            return sorted(self.folder.glob("*.parquet"))
        except OSError:
            return []

    def _read(self, path: Path) -> Any | None:
        """One segment as a pyarrow table, or None (gone, or damaged: then removed)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            data = path.read_bytes()
        except FileNotFoundError:  # merged away by another job meanwhile: its records are in the merged segment
            return None
        except OSError as exc:
            logger.warning("passage store: %s cannot be read (%s): its passages are looked up again", path, exc)
            return None
        why = "its content does not match its name"
        if hashlib.sha256(data).hexdigest()[:32] == path.stem:
            try:
                return pq.read_table(pa.BufferReader(data))
            except (ValueError, OSError, pa.ArrowException) as exc:
                why = str(exc)
        logger.warning("passage store: %s is damaged (%s): removed, its passages are looked up again", path, why)
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    def _table(self) -> Any:
        """Every segment, an id's rows from one segment only (each segment holds all records of its ids)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tables = [t.append_column("segment", pa.array(np.full(t.num_rows, i, dtype=np.int32)))
                  for i, path in enumerate(self.segments()) if (t := self._read(path)) is not None]
        if not tables:
            return None
        table = pa.concat_tables(tables)
        if len(tables) > 1:
            first = table.group_by("doc_id").aggregate([("segment", "min")])
            table = table.join(first, "doc_id")
            table = table.filter(pc.equal(table["segment"], table["segment_min"]))
        return table.select(["doc_id", "line", "text"])

    def get(self, ids: list[str]) -> tuple[list[Record], list[str]]:
        """``(records of the ids the store knows, ids it does not know)``; an id it knows may have no record (it is
        not in this file)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = self._table()
        if table is None:
            return [], list(ids)
        table = table.filter(pc.is_in(table["doc_id"], value_set=pa.array(ids, type=pa.string())))
        known = set(table["doc_id"].to_pylist())
        found = table.filter(pc.greater(table["line"], 0))
        records = list(zip(found["line"].to_pylist(), found["doc_id"].to_pylist(), found["text"].to_pylist(),
                           strict=True))
        return records, [i for i in ids if i not in known]

    def asked(self) -> list[str]:
        """Every id the store knows (found in the file or not)."""
        table = self._table()
        return [] if table is None else sorted(set(table["doc_id"].to_pylist()))

    def add(self, asked: Iterable[str], records: list[Record]) -> None:
        """Keep the records found for the ``asked`` ids (those without a record: not in the file). A cache that
        cannot be written is no error: the next lookup goes through the index again."""
        new = set(asked) - set(self.asked())
        found = {doc_id for _, doc_id, _ in records}
        rows = sorted(r for r in records if r[1] in new) + [(0, i, None) for i in sorted(new - found)]
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

    def _write(self, rows: Sequence[tuple[int, str, str | None]]) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        lines, ids, texts = zip(*rows, strict=True)
        table = pa.table({"doc_id": pa.array(ids, type=pa.string()), "line": pa.array(lines, type=pa.int64()),
                          "text": pa.array(texts, type=pa.string())})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        data = sink.getvalue().to_pybytes()
        path = self.folder / f"{hashlib.sha256(data).hexdigest()[:32]}.parquet"
        atomic_write_bytes(path, data)
        return path

    def merge(self) -> None:
        """All segments into one (under the store's lock; a job that finds it held leaves the merge to the holder)."""
        with file_lock(self.folder / LOCK, wait=False) as held:
            if not held:
                return
            before = self.segments()
            table = self._table()
            if table is None or len(before) < 2:
                return
            rows = sorted(zip(table["line"].to_pylist(), table["doc_id"].to_pylist(), table["text"].to_pylist(),
                              strict=True), key=lambda r: (r[0] == 0, r[0], r[1]))
            merged = self._write(rows)
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
