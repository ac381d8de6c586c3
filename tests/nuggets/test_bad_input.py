"""Bad nugget input is a clear error naming the file and the line (and the fix), before any work starts.

Cases: an importance other than vital / okay (in a bank, in an assignment file), an assignment label outside the
three, an assignment file naming an unknown query or a nugget not in the bank, an assignment file's answer text
that is not a string (one without text is scored, as the reference scorer does: tests/nuggets/test_parity.py), an
answer with no text in the answers the workflow reads, a nugget without importance when nothing can label it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.mini import write_mini_dataset

from autograde.cli import main
from autograde.config.experiment import load_config
from autograde.core.errors import InputError
from autograde.core.ids import item_id
from autograde.nuggets.interchange import read_assignments
from autograde.workflow.checks import check_experiment

NUGGET = {"text": "Bees collect nectar", "importance": "vital", "assignment": "support"}


def _line(qid: str = "q1", answer: object = "Bees make honey.", run: str = "r", **nugget: str) -> str:
    return json.dumps({"qid": qid, "run_id": run, "answer_text": answer, "nuggets": [{**NUGGET, **nugget}]})


@pytest.mark.parametrize(("line", "message"), [
    (_line(importance="critical"), "has importance 'critical'; valid: vital, okay"),
    (_line(assignment="supported"), "has assignment 'supported'; valid: support, partial_support, not_support"),
    (_line(answer=3), "'answer_text' of run 'r' to query 'q1' is int 3, not a string"),
    (_line(qid="q9"), "query 'q9' is not a known query"),
    (_line(text="Bees sleep at night"), "is not a nugget of query 'q1' in the bank"),
])
def test_assignment_file_problems_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "assignments.jsonl"
    path.write_text(_line(run="ok") + "\n" + line + "\n")  # the bad record is on line 2
    with pytest.raises(InputError) as exc:
        read_assignments(path, nuggets={"q1": {item_id("q1", NUGGET["text"])}}, queries={"q1"})
    assert f"{path}:2: " in str(exc.value) and message in str(exc.value) and "(fix: " in str(exc.value)
    assert len(exc.value.problems) == 1


def test_score_command_reports_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(_line(assignment="maybe") + "\n")
    assert main(["nuggets", "score", "--assignments", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:1: nugget 0 ('Bees collect nectar') has assignment 'maybe'" in err and "Traceback" not in err


def _experiment(tmp_path: Path, items: list[dict], answers_extra: str = "") -> Path:
    cfg = write_mini_dataset(tmp_path)
    (tmp_path / "data" / "nuggets.jsonl").write_text(json.dumps({"query_id": "q1", "items": items}) + "\n")
    if answers_extra:
        with (tmp_path / "data" / "answers.jsonl").open("a") as f:
            f.write(answers_extra)
    raw = yaml.safe_load(cfg.read_text())
    raw["banks"]["nuggets"] = "data/nuggets.jsonl"
    raw["graders"] = []
    raw["nuggets"] = {"bank": "nuggets", "assessors": [{"name": "a", "backend": "embedded", "thresholds": [3, 4]}]}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    return cfg


def _problems(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(cfg.parent)
    with pytest.raises(InputError) as exc:
        check_experiment(load_config(cfg))
    return str(exc.value)


def test_bank_importance_other_than_vital_or_okay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _experiment(tmp_path, [{"nugget_text": "Bees collect nectar", "info": {"importance": "Vital!"}}])
    text = _problems(cfg, monkeypatch)
    assert "data/nuggets.jsonl:1: nugget q1/" in text and "has importance 'Vital!'; valid: vital, okay" in text


def test_nugget_without_importance_and_nothing_to_label_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _experiment(tmp_path, [{"nugget_text": "Bees collect nectar"}])
    text = _problems(cfg, monkeypatch)
    assert "data/nuggets.jsonl:1: nugget q1/" in text and "has no importance" in text
    assert "nuggets.missing_importance: okay" in text  # the fix names the ways out


def test_answer_without_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _experiment(tmp_path, [{"nugget_text": "Bees collect nectar", "info": {"importance": "okay"}}],
                      json.dumps({"query_id": "q3", "run": "gen", "text": "  \n "}) + "\n")
    text = _problems(cfg, monkeypatch)
    assert "data/answers.jsonl:3: empty answer of run 'gen' for query 'q3'" in text


def test_assessor_config_errors(tmp_path: Path) -> None:
    from autograde.core.errors import ConfigError

    cfg = _experiment(tmp_path, [{"nugget_text": "x", "info": {"importance": "okay"}}])
    raw = yaml.safe_load(cfg.read_text())
    raw["nuggets"]["assessors"] = [{"name": "m", "grader": "nope", "thresholds": [4, 3]}]
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    assert "must not be above the support threshold" in str(exc.value)
    raw["nuggets"]["assessors"] = [{"name": "m", "grader": "nope", "thresholds": [3, 4]}]
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ConfigError, match="maps grader 'nope', which is not under graders"):
        load_config(cfg)


def test_section_problems_are_found_before_any_job_with_their_line(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline that is no RAG run, and a mapped assessor whose thresholds lie above its grader's grades: both
    found by the checks before any job (they used to surface at the last job, after all grading), each at its line."""
    cfg = _experiment(tmp_path, [{"nugget_text": "Bees collect nectar", "info": {"importance": "vital"}}])
    raw = yaml.safe_load(cfg.read_text())
    raw["graders"] = [{"name": "sim", "backend": "embedded", "bank": "nuggets"}]
    raw["nuggets"]["baseline"] = "gen-2"
    raw["nuggets"]["assessors"].append({"name": "m", "grader": "sim", "thresholds": [4, 6]})
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.chdir(cfg.parent)
    with pytest.raises(InputError) as exc:
        check_experiment(load_config(cfg), str(cfg))
    text = str(exc.value)
    assert "nuggets.baseline 'gen-2' is not a RAG run of data.answers (fix: did you mean 'gen'?" in text
    assert ("nuggets.assessors[1] (m): thresholds [4, 6] lie above the grades of grader 'sim' (0-5): no answer could "
            "ever be 'support'") in text
    lines = cfg.read_text().splitlines()
    assert f"config.yaml:{next(i for i, x in enumerate(lines, 1) if 'baseline:' in x)}: nuggets.baseline" in text
