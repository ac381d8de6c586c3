"""The package logger and progress bars (shown only when attached to a terminal)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

logger = logging.getLogger("autograde")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (not the stream seen at setup), so a
    redirected or captured stderr gets the messages."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def setup_logging(level: int = logging.INFO) -> None:
    """Configure the package logger once (stderr, one line per record); other handlers (a job's log file) stay."""
    if any(isinstance(h, _StderrHandler) for h in logger.handlers):
        if level < logger.getEffectiveLevel():  # NOTSET (0) would inherit the root's WARNING
            logger.setLevel(level)
        return
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s autograde: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False  # libraries that add root handlers (rouge-score) must not duplicate our lines


def progress(items: Iterable[T], total: int | None = None, desc: str = "") -> Iterator[T]:
    """Wrap ``items`` in a tqdm bar when stderr is a terminal, else yield them unchanged."""
    if sys.stderr.isatty():
        from tqdm import tqdm

        yield from tqdm(items, total=total, desc=desc)
    else:
        yield from items


class _NoBar:
    """Stands in for a progress bar when stderr is not a terminal."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str = "") -> _NoBar:
    """A tqdm bar with ``update(n)`` / ``close()`` when stderr is a terminal, else a silent stand-in."""
    if sys.stderr.isatty() and total:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc)
    return _NoBar()
