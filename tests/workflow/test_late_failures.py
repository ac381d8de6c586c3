"""Failures that only a grading job can see, in a real Snakemake run: the job fails with the cause and the fix in
its log, and there is no traceback anywhere (job log, Snakemake's output).

- an ``hf`` model that is neither local nor in the Hugging Face cache (the hub is unreachable);
- an OpenAI-compatible endpoint whose model answers every prompt with text no grade can be read from;
- an endpoint that answers some requests with an empty ``choices`` list: only those requests fail.

The endpoints are the real loopback HTTP server of ``tests/loopback_server.py`` with a model that always gives the
same answer (:class:`FixedChat`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.helpers import run_workflow
from support.loopback_server import Faults, FixedChat, LoopbackServer
from support.mini import MINI_QUERIES, write_mini_dataset


def experiment(tmp_path: Path, grader: dict[str, object], **grading: object) -> Path:
    cfg = write_mini_dataset(tmp_path, shards=2)
    raw = yaml.safe_load(cfg.read_text())
    raw["graders"] = [grader]
    raw["grading"].update(grading)
    raw.pop("cover", None)
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    return cfg


def job_logs(wd: Path) -> str:
    return "".join(p.read_text() for p in sorted((wd / "logs" / "grade").rglob("*.log")))


def run_grades(workdir: Path, grader: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the workflow up to the grader's merged grades (the jobs these failures concern)."""
    return run_workflow(workdir, "--keep-going", f"results/grades/{grader}.parquet", *args, env=env, timeout=600)


@pytest.fixture
def fixed() -> Iterator[tuple[LoopbackServer, FixedChat]]:
    chat = FixedChat("yes")
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
        yield srv, chat


def openai_grader(srv: LoopbackServer, **options: object) -> dict[str, object]:
    return {"name": "llm", "backend": "openai", "bank": "direct", "prompt_class": "FagB", "model": "fixed",
            "scoring": "generate", "thresholds": [1],
            "options": {"base_url": srv.base_url, "max_retries": 1, "backoff_base_s": 0.01, "backoff_max_s": 0.02,
                        "timeout_s": 30, **options}}


@pytest.mark.workflow
@pytest.mark.slow
def test_model_missing_fails_its_job_with_the_fix(tmp_path: Path, fixed: tuple[LoopbackServer, FixedChat]) -> None:
    experiment(tmp_path, {"name": "flan", "backend": "hf", "bank": "questions", "model": "nobody/no-such-model",
                          "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
                          "options": {"device": "cpu", "local_files_only": False}})
    # validate says it will be downloaded (a warning); the hub (a loopback server that knows no model: 404 at once,
    # where a closed port made the hub client retry for ~30 s) does not have it, so the job cannot get it
    hub = fixed[0].base_url.removesuffix("/v1")
    env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf")}
    res = run_grades(tmp_path, "flan", "--set-scatter", "grade=1", **env)  # one job
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "is not in the local Hugging Face cache; the first job downloads it" in out
    log = job_logs(tmp_path)
    assert "cannot load model 'nobody/no-such-model'" in log and "fix: download it first" in log, log[-3000:]
    assert "Traceback" not in log and "Traceback" not in out, out[-3000:]


@pytest.mark.workflow
@pytest.mark.slow
def test_unparseable_answers_fail_their_job(tmp_path: Path, fixed: tuple[LoopbackServer, FixedChat]) -> None:
    srv, chat = fixed
    chat.text = "Well, that depends on what you mean."
    experiment(tmp_path, openai_grader(srv))
    res = run_grades(tmp_path, "llm")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    log = job_logs(tmp_path)
    assert "none of the" in log and "answers could be turned into a grade" in log and "scoring: logits" in log
    assert "Traceback" not in log and "Traceback" not in out, out[-3000:]
    assert not (tmp_path / "results/grades/llm.parquet").exists()  # leaderboards never see an empty grade table


@pytest.mark.workflow
@pytest.mark.slow
def test_empty_choices_fail_only_their_requests(tmp_path: Path, fixed: tuple[LoopbackServer, FixedChat]) -> None:
    srv, _ = fixed
    srv.faults = Faults(empty_choices=(MINI_QUERIES["q1"],))
    experiment(tmp_path, openai_grader(srv), allow_failures=0.9, batch_size=16)
    res = run_grades(tmp_path, "llm")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    failures = [json.loads(x) for x in (tmp_path / "results/grades/llm.failures.jsonl").read_text().splitlines()]
    stats = json.loads((tmp_path / "results/grades/llm.stats.json").read_text())
    assert failures and {f["query_id"] for f in failures} == {"q1"}  # only the requests that got no choices
    assert all("the completion has no choices" in f["error"] for f in failures)
    assert stats["ok"] == stats["pairs"] - len(failures) > 0
    assert "Traceback" not in out and "IndexError" not in out + job_logs(tmp_path)
