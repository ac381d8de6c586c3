"""The scaffolding of every sharded model job: resources per backend, the GPU guard, the vLLM-environment
dispatch and the gather of shard stats and failures.

Grading, test-bank generation, nugget importance and nugget assignment (and every model stage to come) are the
same kind of job: a shard of prompts for one model spec (:mod:`autograde.grading.spec`), sized by its backend,
guarded against a GPU node that shows no GPU, run in the vLLM environment when its backend lives there, and
gathered by a merge that refuses shards made for an older config. This module does each of those once:

- :class:`ModelJobs` gives a rule its ``resources:`` and ``conda:`` (by backend, from the registry);
- :func:`run_model_job` runs one job: the GPU guard, then in this process or, for a backend with its own
  environment, through the ``autograde`` command in that environment (a temporary config outside ``results/``);
- :func:`gather_shards` reads the shards' stats (refusing stale ones by digest), sums their counters and joins
  their failure files.

>>> job_resources(None)["gpu"], job_resources(None)["mem_mb"]
(0, 4000)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from autograde.core.errors import GPUUnavailableError, Problems
from autograde.core.layout import ENVS
from autograde.core.log import logger
from autograde.grading.registry import GPU_JOB, backend

if TYPE_CHECKING:
    from autograde.grading.spec import ModelSpec

T = TypeVar("T")

NO_MODEL_JOB = (4000, 60)
"""(memory in MB, runtime in minutes) of a model job that runs no model (e.g. a mapped assessor)."""
GPU_MODEL_ENV = "AUTOGRADE_GPU_MODEL"
"""Environment variable naming the GPU model a GPU job asks for (``--gpus=<model>:1`` under SLURM)."""
RESOURCE_NAMES = ("gpu", "gpu_model", "mem_mb", "runtime")


def needs_gpu(spec: ModelSpec | None) -> bool:
    """Whether a job of this model spec requests a GPU: hf/vllm unless ``options.device: cpu``."""
    return spec is not None and spec.backend is not None and backend(spec.backend).needs_gpu(spec.options)


def job_resources(spec: ModelSpec | None) -> dict[str, Any]:
    """Per-job resources of a model job, by backend: ``gpu``, ``gpu_model``, ``mem_mb``, ``runtime`` (minutes) and
    ``conda_env`` (the job's environment file under ``--sdm conda``; ``envs/vllm.yaml`` for vllm).

    A GPU job asks for one GPU (``gpu=1`` becomes ``--gpus=1`` with the SLURM executor; ``$AUTOGRADE_GPU_MODEL``
    makes it ``--gpus=<model>:1``), host memory to load the weights and a long runtime. Other jobs ask for no GPU
    and their backend's CPU size (the openai backend is network-bound). Override any of them per run with
    ``--set-resources <rule>:mem_mb=...``. ``spec`` None: a job of the rule that runs no model.
    """
    if spec is None or spec.backend is None:
        mem, runtime = NO_MODEL_JOB
        return {"gpu": 0, "gpu_model": None, "mem_mb": mem, "runtime": runtime, "conda_env": _conda_env("hf.yaml")}
    b = backend(spec.backend)
    if needs_gpu(spec):
        mem, runtime = GPU_JOB
        return {"gpu": 1, "gpu_model": os.environ.get(GPU_MODEL_ENV) or None, "mem_mb": mem, "runtime": runtime,
                "conda_env": _conda_env(b.conda_env)}
    mem, runtime = b.cpu_job
    return {"gpu": 0, "gpu_model": None, "mem_mb": mem, "runtime": runtime, "conda_env": _conda_env(b.conda_env)}


def _conda_env(name: str) -> str | None:
    env = ENVS / name
    return str(env) if env.exists() else None


class ModelJobs:
    """The ``resources:`` and ``conda:`` of one model rule, from the model spec of each job.

    ``spec_of(wildcards)`` is the job's model spec (None: the job runs no model). In a rule::

        conda: GRADE_JOBS.conda_env
        resources: **GRADE_JOBS.resources()
    """

    def __init__(self, rule: str, spec_of: Callable[[Any], ModelSpec | None]) -> None:
        self.rule = rule
        self.spec_of = spec_of

    def _get(self, name: str) -> Callable[[Any], Any]:
        def get(wildcards: Any) -> Any:
            return job_resources(self.spec_of(wildcards))[name]

        get.__name__ = f"{self.rule}_{name}"
        return get

    def resources(self) -> dict[str, Callable[[Any], Any]]:
        """Named functions for ``gpu``, ``gpu_model``, ``mem_mb`` and ``runtime``."""
        return {name: self._get(name) for name in RESOURCE_NAMES}

    def conda_env(self, wildcards: Any) -> Any:
        return job_resources(self.spec_of(wildcards))["conda_env"]


def require_gpu(spec: ModelSpec | None, owner: str) -> None:
    """Fail at once (before loading a model) when a GPU job sees no GPU.

    ``options.device: cuda`` and backends that only run on a GPU always need one. ``device: auto`` needs one inside
    a SLURM job (the job was sized and queued for a GPU); on a workstation it falls back to the CPU with a
    warning, where the backend can. Raises :class:`GPUUnavailableError` naming the job, the backend and the fix.
    """
    from autograde.core.runtime import gpu_visibility

    if spec is None or not needs_gpu(spec):
        return
    assert spec.backend is not None
    visible, seen = gpu_visibility()
    if visible:
        logger.info("%s: GPU visible (%s)", owner, seen)
        return
    device = str(spec.options.get("device", "auto"))
    in_slurm = "SLURM_JOB_ID" in os.environ
    if device == "auto" and backend(spec.backend).environment == "main" and not in_slurm:
        logger.warning("%s (backend %s, device auto): no GPU visible (%s); running on the CPU", owner, spec.backend,
                       seen)
        return
    where = f"SLURM job {os.environ['SLURM_JOB_ID']}" if in_slurm else "this machine"
    raise GPUUnavailableError(
        f"{owner} (backend {spec.backend}, device {device}) needs a GPU, but none is visible in {where} ({seen}). "
        "Fix: run the model jobs on GPU nodes - with SLURM use the slurm profile (snakemake --workflow-profile "
        "profiles/slurm), which requests --gpus=1 for these jobs, and send them to a GPU partition "
        "(--set-resources <rule>:slurm_partition=<gpu partition>); or run on the CPU by setting options.device: "
        f"cpu for {owner} (slow for large models)."
    )


def runs_in_own_environment(spec: ModelSpec | None) -> bool:
    """Whether a job of this spec runs in another Python environment (vLLM's), through the ``autograde`` command:
    its backend lives there and this Python is not that environment (a job under ``--sdm conda`` with
    ``envs/vllm.yaml`` already is)."""
    if spec is None or spec.backend is None or backend(spec.backend).environment == "main":
        return False
    import importlib.util

    return importlib.util.find_spec("vllm") is None


def run_model_job(spec: ModelSpec | None, owner: str, in_process: Callable[[], T], command: Sequence[str],
                  raw_config: dict[str, Any], threads: int | None = None) -> T | None:
    """Run one model job: the GPU guard, then ``in_process()`` here, or for a backend with its own environment
    ``autograde <command> --config <the experiment>`` in that environment (the command a user runs by hand, so
    cache, identities, stats and failures are those of the other backends; it is ``__main__``-guarded, which vLLM's
    engine processes need). Returns ``in_process()``'s value (None when run in the other environment)."""
    require_gpu(spec, owner)
    if not runs_in_own_environment(spec):
        return in_process()
    assert spec is not None
    from autograde.grading.vllm_env import find_vllm_python, run_cli_in_vllm_env

    run_cli_in_vllm_env(raw_config, list(command), owner, threads, find_vllm_python(spec.options.get("python")))
    return None


def gather_shards(shard_stats: Sequence[str | Path], counters: Sequence[str],
                  expected_digests: dict[str, str] | None = None, what: str = "shard", older: str = "config",
                  fix: str = "rerun it (cached results are reused)") -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The shards' stats and the sum of ``counters`` over them.

    With ``expected_digests`` (shard name -> digest), a shard made for an older config is refused: a job that
    failed or was cancelled after an edit leaves its old output behind without Snakemake metadata, so Snakemake
    would not rerun it, and merging it would silently mix two configs.
    """
    problems = Problems()
    shards = [json.loads(Path(p).read_text(encoding="utf-8")) for p in shard_stats]
    for path, st in zip(shard_stats, shards, strict=True):
        want = (expected_digests or {}).get(st.get("shard", ""))
        if want is not None and st.get("digest") != want:
            problems.add(str(path), None, f"{what} made for an older {older}", fix)
    problems.raise_if_any()
    return shards, {k: sum(int(s.get(k) or 0) for s in shards) for k in counters}


def join_failures(shard_failures: Sequence[str | Path]) -> str:
    """The shards' failure files (JSONL) joined in order."""
    return "".join(Path(p).read_text(encoding="utf-8") for p in shard_failures)
