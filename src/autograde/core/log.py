"""The package logger and the progress of long jobs: a bar on a terminal, a line at a steady interval in logs.

Every long job (grading, bank generation, nugget importance and assignment, corpus index builds, calibration and
network training) reports through :func:`progress` / :func:`progress_bar` / :class:`Progress`, so a Snakemake or
SLURM job log (stderr not a terminal) shows done / total, the rate and the time left every
``$AUTOGRADE_PROGRESS_INTERVAL`` seconds (default 30; ``0`` or ``off``: no progress lines). A job shorter than the
interval writes no progress line at all.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from autograde.core.errors import InvalidValueError

T = TypeVar("T")

logger = logging.getLogger("autograde")

PROGRESS_ENV = "AUTOGRADE_PROGRESS_INTERVAL"
"""Seconds between two progress lines in a log (stderr not a terminal); ``0`` or ``off`` turns them off."""
DEFAULT_PROGRESS_INTERVAL = 30.0


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record (not the stream seen at setup), so a
    redirected or captured stderr gets the messages. Progress lines are left out while a bar is drawn there."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "progress_line", False) and _stderr_is_terminal():
            return False  # the terminal shows the bar; the line still reaches a job's log file
        return bool(super().filter(record))


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


def progress_interval() -> float | None:
    """Seconds between progress lines in a log, from ``$AUTOGRADE_PROGRESS_INTERVAL`` (None: no lines).

    >>> import os; os.environ["AUTOGRADE_PROGRESS_INTERVAL"] = "5"; progress_interval()
    5.0
    >>> os.environ["AUTOGRADE_PROGRESS_INTERVAL"] = "off"; progress_interval() is None
    True
    >>> del os.environ["AUTOGRADE_PROGRESS_INTERVAL"]; progress_interval()
    30.0
    """
    raw = os.environ.get(PROGRESS_ENV, "").strip()
    if not raw:
        return DEFAULT_PROGRESS_INTERVAL
    if raw.lower() in ("off", "none", "no", "false"):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidValueError(f"{PROGRESS_ENV}={raw!r} is not a number of seconds (fix: set it to e.g. 30, or "
                                "'off' for no progress lines in logs)") from None
    if not math.isfinite(value) or value < 0:
        raise InvalidValueError(f"{PROGRESS_ENV}={raw!r} must be a number of seconds >= 0 (fix: e.g. 30; 0 or "
                                "'off': no progress lines)")
    return value or None


def format_duration(seconds: float) -> str:
    """A short duration: ``45s``, ``3m05s``, ``2h07m``.

    >>> format_duration(4.2), format_duration(185), format_duration(7620), format_duration(float("inf"))
    ('4s', '3m05s', '2h07m', '?')
    """
    if not math.isfinite(seconds):
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def progress_line(desc: str, done: int, total: int | None, rate: float, unit: str = "") -> str:
    """One progress line: done / total (percent), the rate (units per second) and the time left at that rate.

    >>> progress_line("grading g", 250, 1000, 25.0, "pairs")
    'grading g: 250/1,000 pairs (25.0%), 25.0 pairs/s, 30s left'
    >>> progress_line("bank b", 3, None, 0.5)
    'bank b: 3 done, 0.50/s'
    """
    rate_text = (f"{rate:.2f}" if rate < 10 else f"{rate:.1f}") + (f" {unit}/s" if unit else "/s")
    if not total:
        return f"{desc}: {done:,} {unit or 'done'}, {rate_text}"
    left = (total - done) / rate if rate > 0 else float("inf")
    return (f"{desc}: {done:,}/{total:,}{' ' + unit if unit else ''} ({100 * done / total:.1f}%), {rate_text}, "
            f"{format_duration(left)} left")


_FROM_ENV = -1.0


class Progress:
    """The progress of one long job: ``update(n)`` as work is done, ``close()`` (or ``with``) at the end.

    On a terminal it draws a tqdm bar. Wherever the package logger writes (stderr that is not a terminal: a
    Snakemake or SLURM job log; a rule's log file), it writes a line every ``interval`` seconds
    (``$AUTOGRADE_PROGRESS_INTERVAL``) with done / total, the rate and the time left, and, when it wrote any, a
    last line at the end. A job shorter than the interval writes none.
    """

    def __init__(self, total: int | None, desc: str = "", unit: str = "", interval: float | None = _FROM_ENV,
                 clock: Any = time.monotonic) -> None:
        self.total = total
        self.desc = desc or "progress"
        self.unit = unit
        self.interval = progress_interval() if interval == _FROM_ENV else interval
        self.clock = clock
        self.done = 0
        self.lines = 0
        self.start = clock()
        self._last = self.start
        self._first: tuple[float, int] | None = None  # (time, done) at the first update: the rate starts there
        self._closed = False
        self._bar: Any = None
        if _stderr_is_terminal() and total != 0:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit or "it", leave=False)

    def update(self, n: int = 1) -> None:
        """``n`` more units done; writes a progress line when the interval has passed since the last one."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        if self.interval is None:
            return
        now = self.clock()
        if self._first is None:
            self._first = (now, self.done)
        if now - self._last >= self.interval and not (self.total and self.done >= self.total):  # close() says it
            self._last = now
            self._write(now)

    def rate(self, now: float) -> float:
        """Units per second since the first update (a model loaded before the first batch does not count), or
        since the start while there is only one update."""
        if self._first is not None and now > self._first[0] and self.done > self._first[1]:
            return (self.done - self._first[1]) / (now - self._first[0])
        return self.done / (now - self.start) if now > self.start else 0.0

    def _write(self, now: float) -> None:
        self.lines += 1
        logger.info("%s", progress_line(self.desc, self.done, self.total, self.rate(now), self.unit),
                    extra={"progress_line": True})

    def close(self) -> None:
        """Ends the bar; after progress lines, one last line says how long the whole job took."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        if self.lines:
            elapsed = self.clock() - self.start
            rate = self.done / elapsed if elapsed > 0 else 0.0
            of = f"/{self.total:,}" if self.total else ""
            logger.info("%s: %s%s %s in %s (%.2f%s)", self.desc, f"{self.done:,}", of, self.unit or "done",
                        format_duration(elapsed), rate, f" {self.unit}/s" if self.unit else "/s",
                        extra={"progress_line": True})

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(items: Iterable[T], total: int | None = None, desc: str = "", unit: str = "") -> Iterator[T]:
    """Yield ``items`` while reporting their progress (:class:`Progress`: a bar on a terminal, lines in logs)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(total, desc, unit) as bar:
        for item in items:
            yield item
            bar.update(1)


def progress_bar(total: int, desc: str = "", unit: str = "") -> Progress:
    """A :class:`Progress` of ``total`` units: ``update(n)``, ``close()``."""
    return Progress(total, desc, unit)
