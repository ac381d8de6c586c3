"""Opening text files (plain or gzip) with UTF-8 checks that report the file and line."""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from autograde.core.errors import Problems

BOM = "\ufeff"
"""A UTF-8 byte order mark some editors put first; dropped when reading (it is not part of an id)."""


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (json would silently keep the last value)."""


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKeyError(f"key {k!r} appears twice in one JSON object")
        out[k] = v
    return out


NOT_FOUND_FIX = "check the path (a relative path starts at the working directory)"
"""The fix of a file that is not there (``autograde validate`` names the config key and line of a configured one)."""


def loads_strict(text: str) -> object:
    """``json.loads`` that refuses duplicate keys (raises :class:`DuplicateKeyError`)."""
    return json.loads(text, object_pairs_hook=_no_duplicate_keys)


def load_json_file(path: str | Path, problems: Problems, fix: str, what: str = "file") -> object | None:
    """A whole JSON file (UTF-8, BOM dropped, duplicate keys refused); None with a problem when unreadable."""
    p = str(path)
    try:
        raw = Path(p).read_bytes()
    except FileNotFoundError:
        problems.add(p, None, f"{what} not found", NOT_FOUND_FIX)
        return None
    except IsADirectoryError:
        problems.add(p, None, f"is a folder, not a {what}", "name the file")
        return None
    try:
        text = raw.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        problems.add(p, raw[: exc.start].count(b"\n") + 1, f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                     "re-encode the file as UTF-8")
        return None
    try:
        return loads_strict(text)
    except DuplicateKeyError as exc:
        problems.add(p, None, str(exc), "keep one entry per key")
    except json.JSONDecodeError as exc:
        problems.add(p, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})", fix)
    return None


def open_binary(path: str, problems: Problems) -> IO[bytes] | None:
    """``path`` opened for reading bytes (``.gz`` decompressed), or None with the problem recorded."""
    try:
        fh = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")  # the caller closes it
        return cast(IO[bytes], fh)
    except FileNotFoundError:
        problems.add(path, None, "file not found", NOT_FOUND_FIX)
    except IsADirectoryError:
        problems.add(path, None, "is a folder, not a file", "name the file")
    return None


def iter_lines(path: str | Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without the newline; bad UTF-8 or truncated gzip become problems."""
    p = str(path)
    raw = open_binary(p, problems)
    if raw is None:
        return
    with raw:
        try:
            for n, bline in enumerate(raw, start=1):
                try:
                    line = bline.decode("utf-8")
                except UnicodeDecodeError as exc:
                    problems.add(p, n, f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                                 "re-encode the file as UTF-8")
                    continue
                if n == 1:
                    line = line.removeprefix(BOM)
                yield n, line.rstrip("\r\n")
        except (EOFError, OSError) as exc:
            problems.add(p, None, f"cannot read the whole file: {exc}", "the gzip file is truncated; recreate it")


CHUNK_BYTES = 32 << 20
"""Bytes per chunk when a large file is read in chunks (:func:`iter_chunks`)."""


def iter_chunks(path: str | Path, problems: Problems, size: int = CHUNK_BYTES) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(first_line_number, byte_offset, chunk)`` of a (gzip) file in chunks that end at a line end.

    For bulk readers that parse many lines at once (pyarrow, numpy) without a Python object per line. Offsets are
    in the decompressed stream; a leading UTF-8 BOM is skipped (the first chunk then starts at offset 3). A missing
    file, a folder or a truncated gzip file become problems, as in :func:`iter_lines`.
    """
    p = str(path)
    raw = open_binary(p, problems)
    if raw is None:
        return
    line, offset, rest, first = 1, 0, b"", True
    with raw:
        try:
            while True:
                block = raw.read(size)
                if first:
                    first = False
                    if block.startswith(BOM.encode("utf-8")):
                        block, offset = block[3:], 3
                data = rest + block
                if not block:
                    if data:
                        yield line, offset, data
                    return
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    continue
                chunk, rest = data[:cut], data[cut:]
                yield line, offset, chunk
                line += chunk.count(b"\n")
                offset += len(chunk)
        except (EOFError, OSError) as exc:
            problems.add(p, None, f"cannot read the whole file: {exc}", "the gzip file is truncated; recreate it")


def iter_json_objects(path: str | Path, problems: Problems, fix: str = "write one JSON object per line"
                      ) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` of a JSONL(.gz) file; blank lines are skipped, bad lines become problems."""
    for n, line in iter_lines(path, problems):
        if not line.strip():
            continue
        try:
            obj = loads_strict(line)
        except DuplicateKeyError as exc:
            problems.add(path, n, str(exc), "keep one entry per key")
            continue
        except json.JSONDecodeError as exc:
            problems.add(path, n, f"not valid JSON: {exc.msg} (column {exc.colno})", fix)
            continue
        if not isinstance(obj, dict):
            problems.add(path, n, f"expected a JSON object, got {type(obj).__name__}", fix)
            continue
        yield n, obj


@functools.cache
def _umask() -> int:
    """The process umask, read once when first needed (never changed at import time).

    Linux reports it in /proc/self/status; elsewhere it is read by setting and restoring it once.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600; a shared cache must stay group-readable
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically; a ``.gz`` path is gzip-compressed (deterministic header)."""
    data = text.encode("utf-8")
    if str(path).endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    atomic_write_bytes(path, data)
