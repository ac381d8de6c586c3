"""File locks of the corpus caches: ``flock``, which the kernel releases when the holder dies (no stale locks).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from autograde.core.log import logger


@contextlib.contextmanager
def file_lock(path: Path, wait: bool = True, waiting: str = "") -> Iterator[bool]:
    """Hold the lock of ``path`` (created if missing). Yields whether it is held: False when another process holds
    it and ``wait`` is False; ``waiting`` is logged before waiting for it. Where the file system has no locks, runs
    unlocked (concurrent work is then wasted work, never a wrong result: every write is atomic)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            if waiting:
                logger.info("%s", waiting)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield True
    finally:
        os.close(fd)
