"""The corpus index's files on disk and its manifest, which verifies itself and the files it lists.

The files of one index (see :mod:`autograde.corpus.index` for how an index is found, checked and rebuilt)::

    manifest.json    the source file (path, size, sampled and full sha256, time stamps), counts, format, and the
                     size and checksum of every file below; its own sha256 is its last field
    entries.bin      one 16-byte entry per record, sorted by key: key (FNV-1a 64 of the id), then
                     ``offset << 24 | length`` (the line's byte offset in the decompressed stream, 40 bits; its
                     length without the newline, 24 bits, saturated for lines of 16 MiB and more)
    entries.crc      crc32 of every block of FENCE entries (4 KiB): checked whenever a block is read
    fences.u8        the key of every FENCE-th entry (a lookup reads only the entry blocks between two fences)
    lines.u8         the number of newlines before every PAGE-th byte of the stream (line numbers for messages)
    checkpoints.gzi  ``.gz`` sources only: the gzip checkpoint index (rapidgzip, gztool format): where to resume
                     decompression, every ~1 MiB of compressed data, with its 32 KiB window compressed
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.ids import content_hash, file_sha256
from autograde.core.text import atomic_write_text

INDEX_FORMAT = 2
"""Bumped when the layout changes (a new format is a new address: old indexes are simply not used)."""
ENTRY = np.dtype([("key", "<u8"), ("pos", "<u8")])
FENCE = 256
"""Entries per block (4 KiB): one fence key and one crc32 per block."""
LENGTH_BITS = 24
LONG_LINE = (1 << LENGTH_BITS) - 1
"""A stored length of LONG_LINE means 'at least that long': the line is read up to its newline."""
MAX_OFFSET = 1 << (64 - LENGTH_BITS)
PAGE = 4096
"""Bytes of the stream per line-count entry: a lookup counts the newlines of at most one page to number a line."""
MANIFEST = "manifest.json"
ENTRIES, ENTRY_CRCS, FENCES, LINES, CHECKPOINTS = "entries.bin", "entries.crc", "fences.u8", "lines.u8", \
    "checkpoints.gzi"
CHECKED_AT_OPEN = (ENTRY_CRCS, FENCES, LINES, CHECKPOINTS)
"""Files whose sha256 is checked whenever the index is opened (small); entries.bin is checked block by block as
it is read (its size at open)."""


class StaleIndexError(Exception):
    """The index does not match its corpus file or is damaged (found while reading it): rebuild it.

    Internal: :func:`autograde.corpus.lookup.lookup_corpus` catches it, rebuilds the index and looks up again.
    """


@dataclass(frozen=True)
class CorpusIndex:
    """An index on disk, verified, and the corpus file it indexes."""

    source: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def compressed(self) -> bool:
        return bool(self.manifest["compressed"])

    @property
    def tsv(self) -> bool:
        return bool(self.manifest["tsv"])

    @property
    def entries(self) -> int:
        return int(self.manifest["entries"])

    @property
    def build_id(self) -> str:
        return str(self.manifest["build_id"])


def _seal(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "manifest_sha256": content_hash(body, 64)}


def write_manifest(folder: Path, body: dict[str, Any]) -> dict[str, Any]:
    """Write ``body`` with its own checksum as the last field (atomically); return what was written."""
    sealed = _seal({k: v for k, v in body.items() if k != "manifest_sha256"})
    atomic_write_text(folder / MANIFEST, json.dumps(sealed, indent=2) + "\n")
    return sealed


def read_manifest(folder: Path) -> tuple[dict[str, Any] | None, str]:
    """The manifest when it is whole and its checksum holds, else ``(None, why not)``."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "no index yet"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"its manifest is unreadable ({type(exc).__name__})"
    if not isinstance(manifest, dict) or _seal({k: v for k, v in manifest.items() if k != "manifest_sha256"}) \
            != manifest:
        return None, "its manifest fails its own checksum"
    if manifest.get("format") != INDEX_FORMAT:
        return None, f"it has format {manifest.get('format')}, this release reads {INDEX_FORMAT}"
    return manifest, ""


def check_files(folder: Path, manifest: dict[str, Any]) -> str:
    """Why the files of an index do not match its manifest ('' when they do): every listed file is there with its
    size, the small ones with their sha256."""
    for name, want in manifest["files"].items():
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        if size != want["bytes"]:
            return f"{name} has {size} bytes, its manifest says {want['bytes']}"
        if "sha256" in want and file_sha256(str(path)) != want["sha256"]:
            return f"{name} fails its checksum"
    return ""


def describe_files(folder: Path) -> dict[str, dict[str, Any]]:
    """Sizes of the index's files, and the sha256 of those checked at every open."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.iterdir()):
        if path.name == MANIFEST:
            continue
        out[path.name] = {"bytes": path.stat().st_size}
        if path.name in CHECKED_AT_OPEN:
            out[path.name]["sha256"] = file_sha256(str(path))
    return out
