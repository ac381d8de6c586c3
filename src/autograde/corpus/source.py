"""A corpus file as the index sees it: what identifies its content, its bytes in chunks, and lines read at offsets.

Plain files are read in place (``pread``). A ``.gz`` file is read through rapidgzip: the build's one pass decodes
it (on one thread: parsing is the slower part) and records a checkpoint every ~1 MiB of compressed data (:data:`CHECKPOINT_BYTES`; at a member
start no window is needed, elsewhere the 32 KiB window before it, compressed); a lookup seeks to the checkpoint
before a line and decodes from there, so it never decompresses more than one checkpoint span per wanted line, and
no second copy of the corpus is written. Why rapidgzip and not indexed_gzip: the module docstring of
:mod:`autograde.corpus.index`.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from autograde.core.errors import Problems
from autograde.core.runtime import job_threads
from autograde.core.text import iter_chunks
from autograde.corpus.store import CHECKPOINTS, StaleIndexError

CHECKPOINT_BYTES = 1 << 20
"""Compressed bytes between two gzip checkpoints (rapidgzip's chunk size): what a lookup decompresses at most for one
wanted line, and what sets the size of the checkpoint index."""
EDGE_BYTES = 64 << 10
SAMPLES, SAMPLE_BYTES = 32, 4096
RACY_NS = 3_000_000_000
"""A file changed less than this before its stamp was taken may change again within the same time stamp (coarse
file system clocks): such a stamp is 'racy' and the next open checks the file's content once."""
GZIP_MAGIC = b"\x1f\x8b"


def fingerprint(path: str | Path) -> dict[str, Any]:
    """What identifies a corpus file without reading all of it: real path, size, and the sha256 of its first and
    last 64 KiB and of 32 samples of 4 KiB spread evenly between (the content address), plus its time stamps and
    inode (a change of those is a doubt that the full checksum settles). Raises ``OSError`` when unreadable."""
    p = Path(path).resolve()
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size
        if size <= 2 * EDGE_BYTES + SAMPLES * SAMPLE_BYTES:
            h.update(fh.read())
        else:
            h.update(os.pread(fh.fileno(), EDGE_BYTES, 0))
            span = size - 2 * EDGE_BYTES - SAMPLE_BYTES
            for i in range(SAMPLES):
                h.update(os.pread(fh.fileno(), SAMPLE_BYTES, EDGE_BYTES + span * i // (SAMPLES - 1)))
            h.update(os.pread(fh.fileno(), EDGE_BYTES, size - EDGE_BYTES))
    return {"path": str(p), "size": size, "samples_sha256": h.hexdigest(), "stamp": stamp(st)}


def stamp(st: os.stat_result) -> dict[str, Any]:
    """Modification and change times and inode: any write to the file changes its change time (which no tool
    sets back), so an equal stamp means an unchanged file, unless the stamp was racy (:data:`RACY_NS`)."""
    racy = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS
    return {"mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "inode": st.st_ino, "racy": racy}


def same_stamp(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k] == b[k] for k in ("mtime_ns", "ctime_ns", "inode")) and not a["racy"] and not b["racy"]


def gzip_threads() -> int:
    return max(1, min(job_threads(), 16))


class _GzipStream:
    """rapidgzip's reader as a file of bytes whose failures are ``OSError`` (a damaged or truncated file).

    rapidgzip 0.16 ends a gzip file cut inside its deflate data without an error (Python's gzip raises): the end of
    the stream must be the end of the file, else the file is truncated.
    """

    def __init__(self, path: str, checkpoint_bytes: int) -> None:
        import rapidgzip

        self.size = os.path.getsize(path)
        # one decoding thread: the pass is bound by parsing, and rapidgzip's parallel decoding without an index
        # (deflate blocks found speculatively) costs more CPU, which the parsing then lacks on a busy machine
        self.file = rapidgzip.RapidgzipFile(path, parallelization=1, chunk_size=checkpoint_bytes)

    def read(self, n: int = -1) -> bytes:
        try:
            data = bytes(self.file.read(n))
            ended_at = self.file.tell_compressed() // 8 if not data else self.size
        except (RuntimeError, ValueError) as exc:
            reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise OSError(f"the gzip data is damaged or truncated ({reason})") from None
        if ended_at != self.size:
            raise OSError(f"the gzip data is damaged or truncated (its last member ends without its end marker, "
                          f"at byte {ended_at} of {self.size})")
        return data


def stream_chunks(path: str, problems: Problems, chunk_bytes: int, out: Path, checkpoint_bytes: int = CHECKPOINT_BYTES
                  ) -> Generator[tuple[int, int, bytes], None, None]:
    """Yield ``(first_line, offset, chunk)`` of the file (:func:`autograde.core.text.iter_chunks`); for a ``.gz``
    file, decoded by rapidgzip, whose checkpoint index is written to ``out / CHECKPOINTS`` once the whole file was
    read without a problem."""
    if not path.endswith(".gz"):
        yield from iter_chunks(path, problems, chunk_bytes)
        return
    with open(path, "rb") as fh:
        head = fh.read(2)
    if not head:  # an empty file has no gzip member (gzip reads it as empty: so do we)
        return
    if head != GZIP_MAGIC:
        problems.add(path, None, "not a gzip file (it does not start with the gzip magic bytes)",
                     "name it without .gz if it is not compressed, or compress it with gzip")
        return
    stream = _GzipStream(path, checkpoint_bytes)
    try:
        before = len(problems.items)
        yield from iter_chunks(path, problems, chunk_bytes, opened=stream)  # type: ignore[arg-type]
        if len(problems.items) == before:
            with open(out / CHECKPOINTS, "wb") as fh:
                stream.file.export_index(fh, _gztool_format())
    finally:
        stream.file.close()


def _gztool_format() -> Any:
    import rapidgzip

    return rapidgzip.IndexFormat.GZTOOL


def gzip_checkpoints(folder: Path, source: str) -> list[int]:
    """The decompressed offsets of the checkpoints of an index (for tests and the docs)."""
    import rapidgzip

    with rapidgzip.RapidgzipFile(source, parallelization=1) as f:
        with open(folder / CHECKPOINTS, "rb") as fh:
            f.import_index(fh)
        return sorted(set(f.block_offsets().values()))


class LineReader:
    """Reads bytes at offsets of the (decompressed) stream: ``pread`` on a plain file, rapidgzip seeks from the
    nearest checkpoint on a ``.gz`` file. A read that fails is a :class:`StaleIndexError`."""

    def __init__(self, source: str, folder: Path, compressed: bool, checkpoint_bytes: int = CHECKPOINT_BYTES) -> None:
        self.compressed = compressed
        self.fd = -1
        self.gz: Any = None
        if not compressed:
            self.fd = os.open(source, os.O_RDONLY)
            return
        import rapidgzip

        try:
            # the build's chunk size: with rapidgzip's default (4 MiB) a sparse lookup decodes ~3x more per read
            self.gz = rapidgzip.RapidgzipFile(source, parallelization=gzip_threads(), chunk_size=checkpoint_bytes)
            with open(folder / CHECKPOINTS, "rb") as fh:
                self.gz.import_index(fh)
        except (RuntimeError, ValueError, OSError) as exc:
            self.close()
            raise StaleIndexError(f"its gzip checkpoints do not load ({exc})") from None

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Ask the kernel to start reading every wanted span at once (plain files: on a cold page cache the reads
        then overlap instead of waiting one after another)."""
        if self.compressed or not hasattr(os, "posix_fadvise"):
            return
        for offset, length in spans:
            os.posix_fadvise(self.fd, offset, length, os.POSIX_FADV_WILLNEED)

    def read(self, offset: int, n: int) -> bytes:
        if not self.compressed:
            return os.pread(self.fd, n, offset)
        try:
            self.gz.seek(offset)
            return bytes(self.gz.read(n))
        except (RuntimeError, ValueError, OSError) as exc:
            raise StaleIndexError(f"the .gz file cannot be read at its checkpoints ({exc})") from None

    def close(self) -> None:
        if self.gz is not None:
            self.gz.close()
            self.gz = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
