"""The config layer's validation: one validator for every model spec (graders, generated banks, the nugget importance
model and assessors), the same verdict on a model from `validate` and `doctor`, and messages that say how to fix a
wrong value (a close match, not only the list of valid values)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autograde.cli import main
from autograde.config.checks import is_hub_id, model_verdict
from autograde.config.experiment import validate_config
from autograde.config.model import GraderConfig
from autograde.core.errors import ConfigError


def test_a_value_typo_gets_a_close_match() -> None:
    with pytest.raises(ConfigError) as err:
        validate_config({"data": {"queries": "q.tsv"}, "graders": [{"name": "a", "backend": "embeded"},
                                                                    {"name": "b", "scoring": "logit"}]})
    msg = str(err.value)
    assert "unknown backend 'embeded'; did you mean 'embedded'?" in msg
    assert "graders.1.scoring: Input should be 'logits' or 'generate' (did you mean 'logits'?)" in msg
    assert "correct the keys and values above" in msg


def test_backend_options_of_every_model_section_are_checked_when_the_config_loads() -> None:
    """A typo in the options of a nugget assessor or the importance model is found when the config loads, with its
    key, like a grader's (it used to surface only when the job built the grader)."""
    raw = {"data": {"queries": "q.tsv", "answers": ["a.jsonl"]}, "banks": {"nuggets": "n.jsonl"},
           "nuggets": {"bank": "nuggets",
                       "importance": {"backend": "openai", "model": "m", "options": {"concurency": 2}},
                       "assessors": [{"name": "a", "backend": "hf", "model": "m.gguf", "options": {"devise": "cpu"}}]}}
    with pytest.raises(ConfigError) as err:
        validate_config(raw)
    msg = str(err.value)
    assert "nuggets.importance.options.concurency: unknown key; did you mean 'concurrency'?" in msg
    assert "nuggets.assessors.0.options.devise: unknown key; did you mean 'device'?" in msg


def test_hub_ids_and_paths() -> None:
    assert is_hub_id("gpt2") and is_hub_id("org/name") and is_hub_id("google/flan-t5-large")
    assert not is_hub_id("./m") and not is_hub_id("/abs/m") and not is_hub_id("m.gguf") and not is_hub_id("a/b/c")


def test_validate_and_doctor_give_one_verdict_on_a_model(mini: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`model: gpt2` (a hub id, not in the local cache here): the same failure, in the same words, from validate and
    from doctor; the verdict is one function's (config.checks.model_verdict)."""
    monkeypatch.setenv("HF_HOME", str(mini.parent / "hf-home"))  # an empty Hugging Face cache
    raw = yaml.safe_load(mini.read_text())
    raw["graders"].append({"name": "llm", "backend": "hf", "bank": "questions", "model": "gpt2",
                           "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices"})
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    verdict = model_verdict(GraderConfig(**raw["graders"][-1]), "graders[1]")
    assert verdict is not None and verdict.status == "fail"
    assert "graders[1].model: 'gpt2' is neither a local folder nor in the local Hugging Face cache" in verdict.message
    assert main(["validate", "--config", str(mini)]) == 2
    assert verdict.message in capsys.readouterr().err
    assert main(["doctor", "--config", str(mini), "--no-estimate"]) == 1
    assert f"[fail] model llm: {verdict.message}" in capsys.readouterr().out


def test_an_embedded_assessor_refuses_a_model() -> None:
    """`model:` on an embedded assessor would be silently ignored: an error, as for an embedded grader."""
    from autograde.config.checks import check_models
    from autograde.config.experiment import ConfigSource
    from autograde.core.errors import Problems

    config = validate_config({"data": {"queries": "q.tsv", "answers": ["a.jsonl"]}, "banks": {"n": "n.jsonl"},
                              "nuggets": {"bank": "n", "assessors": [
                                  {"name": "a", "backend": "embedded", "model": "x", "thresholds": [3, 4]}]}})
    problems = Problems()
    check_models(config, ConfigSource.of("config"), problems)
    assert any("nuggets.assessors[0] (a): model: is not used by backend embedded" in p.message for p in problems.items)
