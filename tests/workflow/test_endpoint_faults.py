"""A failing LLM endpoint in a real workflow run: the grading jobs stop with the cause (in their log, without a
traceback), nothing downstream runs on missing grades, and a plain rerun after the endpoint recovers grades
exactly the failed pairs.

The endpoint is the real OpenAI-compatible loopback server answering from SmolLM2 (tests/loopback_server.py);
"down" means it answers HTTP 500 to every request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.helpers import run_workflow
from support.loopback_server import Faults, LoopbackServer, SmolLM2Chat
from support.mini import write_mini_dataset
from support.models import smollm2_model_dir

KEY_ENV = "AUTOGRADE_TEST_FAULTS_KEY"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    llm = SmolLM2Chat.load(smollm2_model_dir())  # the GGUF converted once (loading it directly is 3x slower)
    with LoopbackServer(llm, api_key="sk-faults-test") as srv:
        yield srv


@pytest.mark.workflow
@pytest.mark.slow
def test_endpoint_down_then_up(tmp_path: Path, server: LoopbackServer) -> None:
    cfg = write_mini_dataset(tmp_path, shards=2)
    raw = yaml.safe_load(cfg.read_text())
    raw["graders"] = [{"name": "llm", "backend": "openai", "bank": "direct", "prompt_class": "FagB",
                       "model": server.model_name, "thresholds": [1],
                       "options": {"base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 1,
                                   "backoff_base_s": 0.01, "backoff_max_s": 0.02, "concurrency": 4}}]
    raw.pop("cover", None)
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))

    server.faults = Faults(always_fail=("",))  # the endpoint is down
    try:
        down = run_workflow(tmp_path, "--keep-going", env={KEY_ENV: "sk-faults-test"}, timeout=600)
    finally:
        server.faults = Faults()
    out = down.stdout + down.stderr
    assert down.returncode != 0
    log = (tmp_path / "logs/grade/llm/1-of-2.log").read_text()
    assert "every pair" in log and "failed; most common cause" in log and "HTTP 500" in log
    assert "rerun the same command" in log
    assert "Traceback" not in log and "Traceback" not in out
    assert "sk-faults-test" not in log + out  # the key never appears
    assert not (tmp_path / "results/grades/llm.parquet").exists()  # nothing downstream ran on missing grades

    up = run_workflow(tmp_path, "--keep-going", env={KEY_ENV: "sk-faults-test"}, timeout=600)  # the plain rerun, endpoint back
    assert up.returncode == 0, up.stderr[-3000:]
    stats = json.loads((tmp_path / "results/grades/llm.stats.json").read_text())
    assert stats["failed"] == 0 and stats["ok"] == stats["pairs"] == stats["computed"] > 0
