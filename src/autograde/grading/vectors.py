"""Stored text vectors of an encoder: after a bank edit the embedded grader encodes the new item, not the passages.

Layout: ``<cache_dir>/embeddings/<identity hash>/<partition>/seg-<host>-<pid>-<time>.bin`` (see
:meth:`autograde.core.layout.CacheLayout.embeddings`); the workflow partitions by query, so a shard reads the
vectors of its own queries only, whatever the size of the whole store. A segment is a sequence of fixed-size
records (16-byte key = the first bytes of the text's sha256, then the vector as little-endian float32); each writer
appends whole batches to its own segment, so concurrent jobs need no lock, and a record torn by a killed writer is
the last bytes of its file, which a reader ignores. Vectors are stored exactly (float32 bytes), so a grade computed
from a stored vector equals the one computed from a fresh encoding bit for bit.

>>> import tempfile, numpy as np
>>> d = tempfile.mkdtemp()
>>> store = VectorStore(d, {"model": "m"}, dim=3)
>>> store.add("q1", {"a text": np.array([0.6, 0.8, 0.0], dtype=np.float32)})
1
>>> store.close()
>>> VectorStore(d, {"model": "m"}, dim=3).get("q1", ["a text", "unknown"])["a text"].tolist()
[0.6000000238418579, 0.800000011920929, 0.0]
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from autograde.core.ids import content_hash
from autograde.core.layout import CacheLayout

KEY_BYTES = 16


def text_key(text: str) -> bytes:
    """The store key of a text: the first :data:`KEY_BYTES` bytes of its UTF-8 sha256."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:KEY_BYTES]


class VectorStore:
    """The vectors of one encoder identity; :meth:`get` reads a partition once, :meth:`add` appends new ones."""

    def __init__(self, cache_dir: str | Path, identity: Mapping[str, Any], dim: int) -> None:
        self.layout = CacheLayout.of(cache_dir)
        self.identity = content_hash(dict(identity), 16)
        self.record = np.dtype([("key", f"V{KEY_BYTES}"), ("vec", "<f4", (dim,))])
        self._loaded: dict[str, dict[bytes, np.ndarray]] = {}
        self._writers: dict[str, BinaryIO] = {}

    def _folder(self, partition: str) -> Path:
        return Path(self.layout.embeddings(self.identity, content_hash(partition, 16)))

    def _partition(self, partition: str) -> dict[bytes, np.ndarray]:
        if partition not in self._loaded:
            found: dict[bytes, np.ndarray] = {}
            for seg in sorted(self._folder(partition).glob("seg-*.bin")):
                try:
                    data = seg.read_bytes()
                except OSError:
                    continue
                whole = len(data) - len(data) % self.record.itemsize  # a torn last record is ignored
                recs = np.frombuffer(data[:whole], dtype=self.record)
                for key, vec in zip(recs["key"], recs["vec"], strict=True):
                    found[bytes(key)] = vec
            self._loaded[partition] = found
        return self._loaded[partition]

    def get(self, partition: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those of ``texts`` the partition has."""
        stored = self._partition(partition)
        out = {}
        for t in texts:
            vec = stored.get(text_key(t))
            if vec is not None:
                out[t] = vec
        return out

    def add(self, partition: str, vectors: Mapping[str, np.ndarray]) -> int:
        """Append new vectors to this process's segment of the partition (one write); returns how many."""
        stored = self._partition(partition)
        new = {text_key(t): np.asarray(v, dtype="<f4") for t, v in vectors.items() if text_key(t) not in stored}
        if not new:
            return 0
        recs = np.empty(len(new), dtype=self.record)
        recs["key"] = [np.void(k) for k in new]
        recs["vec"] = np.stack(list(new.values()))
        fh = self._writers.get(partition)
        if fh is None:
            folder = self._folder(partition)
            folder.mkdir(parents=True, exist_ok=True)
            fh = open(folder / f"seg-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.bin", "ab")
            self._writers[partition] = fh
        fh.write(recs.tobytes())
        fh.flush()
        stored.update(new)
        return len(new)

    def forget(self) -> None:
        """Drop the partitions read so far from memory (a huge shard bounds its memory; they are read again when
        asked for)."""
        self._loaded.clear()

    def close(self) -> None:
        for fh in self._writers.values():
            fh.close()
        self._writers.clear()
