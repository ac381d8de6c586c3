"""The machine a job runs on: the thread count of every numeric library, and what GPUs are visible.

>>> set_threads(None) is None or isinstance(set_threads(None), int)
True

Which jobs need a GPU, and the guard that fails a GPU job at once, are the job scaffolding's
(:mod:`autograde.pipeline.jobs`): they depend on the backend, and backends are known to the registry only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

THREADS_ENV = "AUTOGRADE_THREADS"
"""The job's thread count, for processes this one starts (the vLLM environment's grading process)."""


def set_threads(threads: int | None) -> int | None:
    """Give torch, OpenMP and BLAS the job's thread count (Snakemake ``threads``), with passive OpenMP waits.

    The one thread control of every model-running stage (grading, bank generation, the rubric network): it sets
    the environment for libraries not loaded yet (torch reads ``OMP_NUM_THREADS`` when it is imported) and calls
    ``torch.set_num_threads`` only when torch is already loaded. It never imports torch itself: every rule script
    calls this, and importing torch (2.5 s of CPU) in the 40-odd jobs that never use it made the example ~3x slower.
    ``None`` keeps a count set earlier in this process (``$AUTOGRADE_THREADS``), else changes nothing. With two
    jobs sharing two cores, busy-waiting OpenMP threads made torch hundreds of times slower (NOTES.md).
    Returns the count in force.
    """
    if not threads:
        threads = int(os.environ.get(THREADS_ENV, "0") or 0) or None
    if not threads:
        return None
    os.environ[THREADS_ENV] = str(threads)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def job_threads() -> int:
    """Threads this process may use: the job's count (:func:`set_threads`, ``$AUTOGRADE_THREADS``), else the CPUs
    it may run on (for libraries that take a thread count, e.g. the corpus index's parallel gzip decoder)."""
    threads = int(os.environ.get(THREADS_ENV, "0") or 0)
    if threads:
        return threads
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Limit BLAS/OpenMP pools already loaded (numpy, scikit-learn) to ``n`` threads inside the block: one thread
    gives identical floating-point results on every machine and load."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(n):
        yield


def gpu_visibility() -> tuple[bool, str]:
    """(a CUDA device is usable here, a short description of what was seen)."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = f"CUDA_VISIBLE_DEVICES={cvd!r}" if cvd is not None else "CUDA_VISIBLE_DEVICES unset"
    if cvd is not None and cvd.strip() in ("", "-1", "NoDevFiles"):
        return False, seen
    if importlib.util.find_spec("torch") is None:
        nvidia = sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))
        return bool(nvidia), f"{seen}; torch not installed; device files: {', '.join(nvidia) or 'none'}"
    import torch

    if torch.cuda.is_available():
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        return True, f"{seen}; torch sees {len(names)} GPU(s): {', '.join(names)}"
    return False, f"{seen}; torch.cuda.is_available() is False (torch {torch.__version__})"
