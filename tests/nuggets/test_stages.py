"""The nugget stages without Snakemake: mapped grades (max over an answer's passages) and `autograde nuggets run`
with a whole-answer assessor (the embedded grader, thresholds) on the tiny dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.mini import write_mini_dataset

from autograde.cli import main
from autograde.core.tables import read_table
from autograde.io.banks.model import BankItem
from autograde.metrics.nuggets import answer_scores
from autograde.nuggets.assign import MAPPED_ERROR, label_assignments, mapped_grades
from autograde.nuggets.interchange import read_assignments


def test_mapped_grades_take_the_max_over_an_answers_passages() -> None:
    grades = pd.DataFrame({"query_id": ["q"] * 4, "passage_id": ["p1", "p2", "p1", "p3"],
                           "item_id": ["q/a", "q/a", "q/b", "q/a"], "grade": [2, 4, 1, 5],
                           "parse_status": ["ok", "ok", "ok", "failed"]})
    rankings = pd.DataFrame({"run": ["r", "r", "s"], "query_id": ["q"] * 3, "passage_id": ["p1", "p2", "p3"]})
    answers = pd.DataFrame({"run": ["r", "s"], "query_id": ["q", "q"], "answer_id": ["A", "B"], "text": ["..", ".."]})
    items = {"q": [BankItem("q/a", "q", "nugget", "a"), BankItem("q/b", "q", "nugget", "b")]}
    out = mapped_grades(grades, rankings, answers, items).set_index(["passage_id", "item_id"])
    assert out.loc[("A", "q/a"), "grade"] == 4 and out.loc[("A", "q/b"), "grade"] == 1  # max over p1, p2
    assert out.loc[("B", "q/a"), "parse_status"] == "failed"  # p3's grade failed: no grade for answer B
    assert out.loc[("B", "q/a"), "error"] == MAPPED_ERROR
    labels = label_assignments(out.reset_index(), answers, {"q": ["q/a", "q/b"]}, {"q/a": "vital", "q/b": "okay"},
                               (3, 4)).set_index(["run", "item_id"])
    assert labels.loc[("r", "q/a"), "assignment"] == "support" and labels.loc[("r", "q/b"), "assignment"] == "not_support"
    assert labels.loc[("s", "q/a"), "assignment"] == "not_support" and labels.loc[("s", "q/a"), "status"] == "failed"


@pytest.mark.slow
def test_nuggets_run_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_mini_dataset(tmp_path)
    (tmp_path / "data" / "nuggets.jsonl").write_text("".join(json.dumps({"query_id": q, "items": [
        {"nugget_text": t, "info": {"importance": i}} for t, i in items]}) + "\n" for q, items in {
        "q1": [("Bees carry nectar to the hive", "vital"), ("Bees fan nectar into honey", "okay")],
        "q2": [("The moon's gravity pulls the oceans", "okay")]}.items()))
    raw = yaml.safe_load(cfg.read_text())
    raw["banks"]["nuggets"] = "data/nuggets.jsonl"
    raw["nuggets"] = {"bank": "nuggets", "assessors": [{"name": "sim-assign", "backend": "embedded",
                                                        "thresholds": [2, 3]}]}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    assert main(["nuggets", "run", "--config", str(cfg)]) == 0
    means = json.loads(capsys.readouterr().out)["sim-assign"]["gen"]
    res = tmp_path / "results"
    stats = json.loads((res / "nuggets/sim-assign/stats.json").read_text())
    assert stats["grades"]["pairs"] == stats["grades"]["computed"] == 3 and stats["answers"] == 2
    answers = read_assignments(res / "nuggets/sim-assign/assignments.jsonl")
    per_answer = [answer_scores(a.labels()) for a in answers]
    assert means["vital_score"] == pytest.approx(sum(s["vital_score"] for s in per_answer) / 2, abs=1e-15)
    assert per_answer[1]["vital_score"] == 0.0  # q2 has no vital nugget
    assert "\n\n" in answers[0].answer_text  # the whole answer (both paragraphs), not a passage
    for measure in ("all_score", "weighted_score", "strict_vital_score"):
        assert (res / f"leaderboards/sim-assign/nuggets/{measure}.tsv").is_file()
    before = read_table(res / "eval/sim-assign/nuggets.parquet")
    assert main(["nuggets", "run", "--config", str(cfg)]) == 0  # again: every pair from the cache
    again = json.loads((res / "nuggets/sim-assign/stats.json").read_text())
    assert again["grades"]["computed"] == 0 and again["grades"]["cached"] == 3
    assert read_table(res / "eval/sim-assign/nuggets.parquet").equals(before)
