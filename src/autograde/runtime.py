"""Runtime checks of the machine a job runs on: GPU visibility (the GPU guard of grading jobs) and threads.

>>> needs_gpu_backend("hf", {"device": "cpu"})
False
>>> needs_gpu_backend("vllm", {})
True
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.errors import GPUUnavailableError
from autograde.log import logger

if TYPE_CHECKING:
    from autograde.config import GraderConfig

GPU_BACKENDS = frozenset({"hf", "vllm"})
"""Backends that run a model on this machine and want a GPU unless ``options.device`` is ``cpu``."""


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



def needs_gpu_backend(backend: str, options: dict[str, Any]) -> bool:
    """Whether a grader with this backend and ``options:`` runs on a GPU (and its jobs request one)."""
    return backend in GPU_BACKENDS and str(options.get("device", "auto")) != "cpu"


def needs_gpu(grader: GraderConfig) -> bool:
    """Whether the grader's jobs request a GPU: hf/vllm backends unless ``options.device`` is ``cpu``."""
    return needs_gpu_backend(grader.backend, grader.options)


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


def require_gpu(grader: GraderConfig) -> None:
    """Fail at once (before loading a model) when a GPU grader's job sees no GPU.

    ``options.device: cuda`` and the ``vllm`` backend always need one. ``device: auto`` needs one inside a
    SLURM job (the job was sized and queued for a GPU); on a workstation it falls back to the CPU with a
    warning. Raises :class:`GPUUnavailableError` naming the grader, the backend and the fix.
    """
    if not needs_gpu(grader):
        return
    visible, seen = gpu_visibility()
    if visible:
        logger.info("grader %s: GPU visible (%s)", grader.name, seen)
        return
    device = str(grader.options.get("device", "auto"))
    in_slurm = "SLURM_JOB_ID" in os.environ
    if device == "auto" and grader.backend == "hf" and not in_slurm:
        logger.warning("grader %s (backend hf, device auto): no GPU visible (%s); grading on the CPU",
                       grader.name, seen)
        return
    where = f"SLURM job {os.environ['SLURM_JOB_ID']}" if in_slurm else "this machine"
    raise GPUUnavailableError(
        f"grader {grader.name!r} (backend {grader.backend}, device {device}) needs a GPU, but none is visible "
        f"in {where} ({seen}). Fix: run the grading jobs on GPU nodes - with SLURM use the slurm profile "
        "(snakemake --workflow-profile profiles/slurm), which requests --gpus=1 for this grader's jobs, and send "
        "them to a GPU partition (--set-resources grade:slurm_partition=<gpu partition>); or grade on the CPU "
        f"by setting options.device: cpu for grader {grader.name!r} (slow for large models)."
    )
