"""The judge's settings and LLM config as an autograde experiment: every bad setting named with the valid ones, the
runner's model, endpoint and key in a grader's fields (the key never in a file), the default grader per backend, a
bad LLM config failing with autograde's own errors; then the judge's stages in this process on the RAG 24 fixture
(embedded grader): its qrels and leaderboards, the track checks before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.helpers import TEST_DATA

from autograde.autojudge.engine import (
    check_track,
    leaderboards_table,
    qrels_path,
    run_stages,
    write_experiment,
    write_judge_inputs,
)
from autograde.autojudge.settings import (
    KEY_ENV,
    JudgeSettings,
    LlmConfig,
    default_graders,
    experiment_sections,
    llm_fields,
    parse_settings,
)
from autograde.config.experiment import load_config
from autograde.core.errors import ConfigError, GraderSetupError, InputError

FIXTURE = TEST_DATA / "autojudge" / "rag24"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_unknown_and_bad_settings_are_named_with_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as err:
        parse_settings({"backnd": "openai", "backend": "gpt", "autograde": {"data": {}}, "outdir": Path("x")})
    text = str(err.value)
    assert "backnd: unknown setting; valid: experiment, autograde, backend" in text
    assert "backend: unknown backend 'gpt'; known: embedded, hf, vllm, openai" in text
    assert "autograde: unknown section(s) ['data']" in text and "docs/autojudge.md" in text
    s = parse_settings({"filebase": "out/default", "outdir": Path("out"), "description": "x"})
    assert s.work_dir_for(s.outdir, s.filebase) == Path("out") / "default.autograde"


def test_the_llm_config_fills_the_graders_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "k1")
    llm = LlmConfig("served-model", "http://127.0.0.1:8000/v1", "k1", "/tmp/c")
    g = llm_fields("openai", llm, {"name": "u", "backend": "openai"})
    assert g == {"name": "u", "backend": "openai", "model": "served-model",
                 "options": {"base_url": "http://127.0.0.1:8000/v1"}}  # the key is in OPENAI_API_KEY already
    other = LlmConfig("served-model", None, "k2")
    g = llm_fields("openai", other, {"name": "u", "model": "mine", "options": {"base_url": "http://h/v1"}})
    assert g["model"] == "mine" and g["options"] == {"base_url": "http://h/v1", "api_key_env": KEY_ENV}
    import os

    assert os.environ[KEY_ENV] == "k2" and "k2" not in json.dumps(g)
    assert llm_fields("hf", llm, {"name": "h"}) == {"name": "h", "model": "served-model"}
    assert llm_fields("embedded", llm, {"name": "e"}) == {"name": "e"}


def test_default_graders_per_backend() -> None:
    llm = LlmConfig("m", "http://127.0.0.1:9/v1")
    for backend, scoring in (("openai", "generate"), ("hf", "logits"), ("vllm", "logits")):
        (g,) = default_graders(JudgeSettings(backend=backend), llm)
        assert g["prompt_class"] == "UMBRELA@pypi-0.0.7" and g["scoring"] == scoring and g["model"] == "m"
    (g,) = default_graders(JudgeSettings(backend="openai"), llm)
    assert g["options"]["umbrela_parser"] == "pypi-0.0.7" and g["options"]["base_url"] == "http://127.0.0.1:9/v1"
    assert default_graders(JudgeSettings(backend="embedded"), llm)[0]["backend"] == "embedded"


def test_experiment_sections_from_a_file_and_inline(tmp_path: Path) -> None:
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"data": {"queries": "ignored.tsv"}, "qrels": {"thresholds": [1]},
                                   "graders": [{"name": "a", "backend": "hf", "bank": "direct",
                                                "prompt_class": "Thomas"}]}))
    s = JudgeSettings(experiment=str(exp), autograde={"evaluation": {"measures": ["map"]}})
    sections = experiment_sections(s, LlmConfig("the-model"))
    assert "data" not in sections and sections["qrels"] == {"thresholds": [1]}
    assert sections["graders"][0]["model"] == "the-model" and sections["evaluation"] == {"measures": ["map"]}


def _prepared(tmp_path: Path, **settings: object) -> tuple[Path, object]:
    s = parse_settings({"backend": "embedded", "outdir": str(tmp_path), "filebase": "default", **settings})
    work = s.work_dir_for(s.outdir, s.filebase)
    inputs = write_judge_inputs(work, _lines(FIXTURE / "topics.jsonl"),
                          [r for p in sorted((FIXTURE / "runs").glob("*.jsonl")) for r in _lines(p)])
    return work, (s, inputs)


def test_a_bad_llm_config_fails_with_autogrades_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    work, (s, inputs) = _prepared(tmp_path, backend="openai")
    path = write_experiment(work, experiment_sections(s, LlmConfig("gpt-4o-mini")), inputs, tmp_path / "cache")
    from autograde.grading.registry import make_grader

    config = load_config(path)
    with pytest.raises(GraderSetupError, match="OPENAI_API_KEY is not set"):
        make_grader(config.graders[0])  # no endpoint and no key: the grader cannot be built, before any request
    bad = {"graders": [{"name": "u", "backend": "openai", "bank": "direct", "prompt_class": "UMBRELA",
                        "scoring": "logits", "options": {"base_url": "http://127.0.0.1:9/v1", "umbrela_parser": "x"}}]}
    s2 = JudgeSettings(autograde=bad)
    path = write_experiment(work, experiment_sections(s2, LlmConfig("m")), inputs, tmp_path / "cache")
    with pytest.raises(ConfigError, match="umbrela_parser"):
        load_config(path)


def test_reports_a_track_refuses_stop_before_any_work(tmp_path: Path) -> None:
    work, (s, inputs) = _prepared(tmp_path)
    check_track(inputs, "rag25")  # the fixture follows rag25
    with pytest.raises(InputError, match="reference index|not in the topics file|cites in the rag24 form"):
        check_track(inputs, "dragun25")  # DRAGUN cites doc ids, no positions


def test_empty_reports_and_unknown_topics_are_left_out(tmp_path: Path) -> None:
    topics = _lines(FIXTURE / "topics.jsonl")
    reports = _lines(FIXTURE / "runs" / "good.jsonl")
    empty = {**reports[0], "answer": []}
    stray = {**reports[1], "metadata": {**reports[1]["metadata"], "narrative_id": "999"}}
    inputs = write_judge_inputs(tmp_path / "w", topics, [*reports[1:], empty, stray])
    assert inputs.dropped == {"empty": 1, "unknown topic": 1}
    assert len(inputs.reports.read_text().splitlines()) == 2


@pytest.mark.model
def test_the_stages_in_this_process(tmp_path: Path) -> None:
    work, (s, inputs) = _prepared(tmp_path)
    path = write_experiment(work, experiment_sections(s, LlmConfig("m")), inputs, tmp_path / "cache")
    config = load_config(path)
    stats = run_stages(config)
    assert stats["minilm"]["computed"] == stats["minilm"]["pairs"] == 15
    assert run_stages(config)["minilm"]["computed"] == 0  # a rerun grades nothing new
    name, qrels = qrels_path(config, None)
    assert name == "minilm/max-4" and Path(qrels).is_file()
    with pytest.raises(InputError, match="minilm/max-4"):
        qrels_path(config, "minilm/max-9")
    table = leaderboards_table(config)
    assert set(table["measure"]) == {f"minilm/max-4/{m}" for m in ("ndcg_cut_10", "recip_rank", "map", "P_10")} | {
        "minilm/cover-4/cover", "minilm/cover-4/ncover"}
    means = table[table["query_id"] == "all"].pivot(index="run", columns="measure", values="value")
    assert means.loc["good", "minilm/max-4/ndcg_cut_10"] > means.loc["poor", "minilm/max-4/ndcg_cut_10"]
    with pytest.raises(InputError, match="not made by this experiment"):
        leaderboards_table(config, ["minilm/max-4/nope"])


def test_graders_of_the_runners_nugget_banks_need_them(tmp_path: Path) -> None:
    from autograde.autojudge.judge import prepare

    topics = _lines(FIXTURE / "topics.jsonl")
    reports = _lines(FIXTURE / "runs" / "good.jsonl")
    settings = {"outdir": str(tmp_path), "filebase": "default", "autograde": {
        "graders": [{"name": "qs", "backend": "embedded", "bank": "nuggets"},
                    {"name": "q", "backend": "embedded", "bank": "direct"}],
        "nuggets": {"bank": "nuggets", "missing_importance": "okay", "assessors": [{"name": "n", "grader": "qs"}]}}}
    with pytest.raises(ConfigError, match="grader 'qs' grades the runner's nugget banks .* create_nuggets: true"):
        prepare(reports, topics, LlmConfig("m"), None, dict(settings))
    p = prepare(reports, topics, LlmConfig("m"), None, dict(settings), making_nuggets=True)
    assert [g.name for g in p.config.graders] == ["q"] and p.config.nuggets is None
