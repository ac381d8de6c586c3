"""Opening text files (plain or gzip) with UTF-8 checks that report the file and line."""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from autograde.errors import Problems


def open_text(path: str | Path, mode: str = "rt"):  # noqa: ANN201 - file object
    """Open ``path`` as text; ``.gz`` files are decompressed (truncated gzip raises, never silently)."""
    p = str(path)
    if p.endswith(".gz"):
        return gzip.open(p, mode, encoding="utf-8") if "t" in mode else gzip.open(p, mode)
    return open(p, mode, encoding="utf-8") if "t" in mode else open(p, mode)


def iter_lines(path: str | Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without the newline; bad UTF-8 or truncated gzip become problems."""
    p = str(path)
    try:
        raw = gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")
    except FileNotFoundError:
        problems.add(p, None, "file not found", "check the path in config/config.yaml")
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
                yield n, line.rstrip("\r\n")
        except (EOFError, OSError) as exc:
            problems.add(p, None, f"cannot read the whole file: {exc}", "the gzip file is truncated; recreate it")


def iter_json_objects(path: str | Path, problems: Problems, fix: str = "write one JSON object per line"
                      ) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` of a JSONL(.gz) file; blank lines are skipped, bad lines become problems."""
    for n, line in iter_lines(path, problems):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(path, n, f"not valid JSON: {exc.msg} (column {exc.colno})", fix)
            continue
        if not isinstance(obj, dict):
            problems.add(path, n, f"expected a JSON object, got {type(obj).__name__}", fix)
            continue
        yield n, obj


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
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
