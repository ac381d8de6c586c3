"""Readers of the rubric, the LLM and human tables: formats, NA, and every bad input named by file, line and fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autograde.core.errors import InputError
from autograde.core.tables import write_table
from autograde.rubric.dataset import build_dataset
from autograde.rubric.definition import BUNDLED_RUBRIC, Rubric, load_rubric
from autograde.rubric.human_answers import read_human, read_human_table, read_synthetic_human
from autograde.rubric.llm_answers import read_grades_llm, read_llm, read_llm_table, read_synthetic_llm
from autograde.rubric.tables import MISSING

LLM_HEADER = "text_id\tcriterion\tsample_llm\tanswer1_prob\tanswer2_prob\tanswer3_prob\tanswer4_prob\n"
HUMAN_HEADER = "round\ttext_id\tDQQ0\tQ1\tQ0\tannotator_id\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _llm(tmp_path: Path, *rows: str) -> Path:
    return _write(tmp_path / "llm.tsv", LLM_HEADER + "".join(r + "\n" for r in rows))


def _one_problem(exc: pytest.ExceptionInfo[InputError]) -> str:
    assert len(exc.value.problems) == 1, str(exc.value)
    return str(exc.value.problems[0])


def test_synthetic_formats_read(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0.1\t0.2\t0.3\t0.4", "a\tQ1\t3\t0.2\t0.3\t0.5\t0",
               "b\tQ0\t1\t1\t0\t0\t0", "b\tQ1\t1\t0.5\t0.5\t0\t0")
    human = _write(tmp_path / "human.tsv", HUMAN_HEADER + "r1\ta\t1\t0\t4\tj1\n"  # Q1 = 0: NA
                   "r1\tb\t1\t2\t1\tj1\n"
                   "r1\tb\t2\t0\t0\tj2\n")  # DQQ0 = 2: screened out
    got_llm = read_synthetic_llm(llm, tiny_rubric)
    got_h = read_synthetic_human(human, tiny_rubric)
    assert np.allclose(got_llm.probs["a"]["Q1"], [0.2, 0.3, 0.5])
    assert got_llm.renormalized == 0
    assert [a.answers for a in got_h.annotations] == [(3, MISSING), (0, 1)]
    assert got_h.screened_out == 1
    data = build_dataset(tiny_rubric, got_llm, got_h)
    assert data.features.shape == (2, 7)  # 4 options of Q0 + 3 of Q1
    assert list(data.feature_names) == ["Q0=1", "Q0=2", "Q0=3", "Q0=4", "Q1=1", "Q1=2", "Q1=3"]
    assert any("screened out 1" in n for n in data.notes)


def test_question_not_in_rubric(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0.1\t0.2\t0.3\t0.4", "a\tQ1\t3\t0.2\t0.3\t0.5\t0", "a\tQ9\t3\t0.2\t0.3\t0.5\t0")
    with pytest.raises(InputError) as exc:
        read_synthetic_llm(llm, tiny_rubric)
    msg = _one_problem(exc)
    assert msg.startswith(f"{llm}:4: question id 'Q9' is not in rubric 'tiny'")
    assert "(fix: add the question to the rubric YAML or remove these rows)" in msg


def test_question_column_not_in_rubric(tmp_path: Path, tiny_rubric: Rubric) -> None:
    human = _write(tmp_path / "human.tsv", "text_id\tQ0\tQ1\tQ7\tannotator_id\na\t1\t1\t1\tj\n")
    with pytest.raises(InputError) as exc:
        read_synthetic_human(human, tiny_rubric)
    assert _one_problem(exc).startswith(f"{human}:1: question id 'Q7' is not in rubric")


def test_answer_outside_option_range(tmp_path: Path, tiny_rubric: Rubric) -> None:
    human = _write(tmp_path / "human.tsv", HUMAN_HEADER + "r1\ta\t1\t2\t3\tj1\nr1\tb\t1\t4\t3\tj1\n")
    with pytest.raises(InputError) as exc:
        read_synthetic_human(human, tiny_rubric)
    msg = _one_problem(exc)
    assert msg.startswith(f"{human}:3: text 'b' judge 'j1': answer 4 to Q1 is outside its options (1, 2, 3)")
    assert "(fix: fix the answer, or the options of Q1 in the rubric)" in msg


def test_na_where_not_allowed_is_masked_with_one_warning_per_question(
        tmp_path: Path, tiny_rubric: Rubric, caplog: pytest.LogCaptureFixture) -> None:
    """The released real-dialogue file answers 0 ('no answer') in a column whose question does not allow NA:
    the file loads, that question is masked in those annotations only, and the warning says how many and why."""
    human = _write(tmp_path / "human.tsv", HUMAN_HEADER + "r1\ta\t1\t2\t0\tj1\nr1\tb\t1\t3\t0\tj1\n"
                   "r1\tc\t1\t0\t2\tj1\n")  # Q0 = 0 twice (na: false); Q1 = 0 once (na: true)
    with caplog.at_level("WARNING", logger="autograde"):
        out = read_synthetic_human(human, tiny_rubric)
    assert [a.answers for a in out.annotations] == [(MISSING, 1), (MISSING, 2), (1, MISSING)]  # Q1 still counts
    assert out.masked == {"Q0": 2}
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "masked 2 NA answer(s) to Q0, which does not allow NA" in warnings[0]
    assert "set 'na: true' for Q0" in warnings[0] and "strict: true" in warnings[0]
    llm = _llm(tmp_path, *(f"{t}\tQ{q}\t1\t0.25\t0.25\t0.25\t{0.25 * (q == 0)}" for t in "abc" for q in (0, 1)))
    with caplog.at_level("INFO", logger="autograde"):
        data = build_dataset(tiny_rubric, read_synthetic_llm(llm, tiny_rubric), out)
    assert any("masked 2 NA answer(s) to Q0" in n for n in data.notes)  # every output repeats it
    logged = [r.getMessage() for r in caplog.records if "masked 2 NA answer(s)" in r.getMessage()]
    assert len(logged) == 1  # ... and the log says it once


def test_na_where_not_allowed_strict(tmp_path: Path) -> None:
    strict = Rubric.model_validate({"main": "Q0", "strict": True, "questions": [
        {"id": "Q0", "options": [1, 2, 3, 4]}, {"id": "Q1", "options": [1, 2, 3], "na": True}]})
    human = _write(tmp_path / "human.tsv", HUMAN_HEADER + "r1\ta\t1\t2\t0\tj1\n")  # Q0 = 0 (NA), na: false
    with pytest.raises(InputError) as exc:
        read_synthetic_human(human, strict)
    msg = _one_problem(exc)
    assert msg.startswith(f"{human}:2: text 'a' judge 'j1': NA answer to Q0, which does not allow NA")
    assert "set 'na: true' for Q0" in msg


def test_text_with_only_some_questions(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0.1\t0.2\t0.3\t0.4", "a\tQ1\t3\t0.2\t0.3\t0.5\t0", "b\tQ0\t1\t1\t0\t0\t0")
    with pytest.raises(InputError) as exc:
        read_synthetic_llm(llm, tiny_rubric)
    msg = _one_problem(exc)
    assert msg.startswith(f"{llm}:4: text 'b' has LLM distributions for only some questions: Q1 missing")
    assert "(fix: give a distribution for every input question, or drop the text (all its rows))" in msg


@pytest.mark.parametrize(("row", "expected"), [
    ("a\tQ0\t4\t0.5\t-0.1\t0.3\t0.3", "negative probability -0.1 for option 2"),
    ("a\tQ0\t4\t0\t0\t0\t0", "all probabilities are zero"),
    ("a\tQ0\t4\tx\t0.2\t0.3\t0.4", "answer1_prob = 'x' is not a number"),
])
def test_bad_probabilities(tmp_path: Path, tiny_rubric: Rubric, row: str, expected: str) -> None:
    llm = _llm(tmp_path, row, "a\tQ1\t3\t0.2\t0.3\t0.5\t0")
    with pytest.raises(InputError) as exc:
        read_synthetic_llm(llm, tiny_rubric)
    msg = _one_problem(exc)
    assert msg.startswith(f"{llm}:2: ")
    assert expected in msg
    assert "(fix: " in msg


def test_probability_for_missing_option(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0.1\t0.2\t0.3\t0.4", "a\tQ1\t3\t0.2\t0.3\t0.3\t0.2")  # Q1 has no option 4
    with pytest.raises(InputError) as exc:
        read_synthetic_llm(llm, tiny_rubric)
    assert "probability 0.2 for option 4, which Q1 does not have" in _one_problem(exc)


def test_all_problems_reported_together(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0\t0\t0\t0", "a\tQ1\t3\t0.2\t0.3\t0.5\t0", "a\tQ5\t1\t1\t0\t0\t0",
               "b\tQ0\t4\t0.5\t-1\t0.3\t0.2", "b\tQ1\t3\t0.2\t0.3\t0.5\t0")
    with pytest.raises(InputError) as exc:
        read_synthetic_llm(llm, tiny_rubric)
    lines = sorted(p.line for p in exc.value.problems)
    assert lines == [2, 4, 5]


def test_renormalized_and_said_so(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _llm(tmp_path, "a\tQ0\t4\t0.1\t0.1\t0.1\t0.2", "a\tQ1\t3\t0.2\t0.3\t0.5\t0",  # Q0 sums to 0.5
               "b\tQ0\t1\t2\t0\t0\t0", "b\tQ1\t1\t0.5\t0.5\t0\t0")  # Q0 sums to 2
    got = read_llm(llm, tiny_rubric)
    assert np.allclose(got.probs["a"]["Q0"], [0.2, 0.2, 0.2, 0.4])
    assert np.allclose(got.probs["b"]["Q0"], [1, 0, 0, 0])
    assert got.renormalized == 2
    assert got.renormalized_note() == "renormalized 2 LLM distribution(s) whose probabilities summed to 0.5..2 instead of 1"
    human = _write(tmp_path / "h.tsv", HUMAN_HEADER + "r1\ta\t1\t2\t3\tj\n")
    data = build_dataset(tiny_rubric, got, read_synthetic_human(human, tiny_rubric))
    assert data.notes[0].startswith("renormalized 2 LLM distribution(s)")


def test_long_tables(tmp_path: Path, tiny_rubric: Rubric) -> None:
    llm = _write(tmp_path / "llm.tsv", "text_id\tquestion_id\tprobs\tgroup_id\n"
                 'a\tQ0\t{"1": 0.1, "2": 0.2, "3": 0.3, "4": 0.4}\tq1\n'
                 'a\tQ1\t{"1": 0.2, "2": 0.3, "3": 0.5}\tq1\n')
    human = _write(tmp_path / "human.tsv", "text_id\tjudge_id\tquestion_id\tanswer\n"
                   "a\tj1\tQ0\t4\na\tj1\tQ1\tNA\na\tj2\tQ0\t\na\tj2\tQ1\t2\n")
    got_llm = read_llm_table(llm, tiny_rubric)
    assert got_llm.groups == {"a": "q1"}
    got_h = read_human_table(human, tiny_rubric)
    assert sorted((a.judge, a.answers) for a in got_h.annotations) == [("j1", (3, MISSING)), ("j2", (MISSING, 1))]
    assert read_human(human, tiny_rubric).annotations == got_h.annotations  # auto-detected format


def test_long_table_errors(tmp_path: Path, tiny_rubric: Rubric) -> None:
    human = _write(tmp_path / "human.tsv", "text_id\tjudge_id\tquestion_id\tanswer\n"
                   "a\tj1\tQ3\t4\na\tj1\tQ0\t5\na\tj1\tQ1\t1\na\tj1\tQ1\t2\n")
    with pytest.raises(InputError) as exc:
        read_human_table(human, tiny_rubric)
    msgs = [str(p) for p in exc.value.problems]
    assert msgs[0].startswith(f"{human}:2: question id 'Q3' is not in rubric")
    assert msgs[1].startswith(f"{human}:3: text 'a' judge 'j1': answer 5 to Q0 is outside its options")
    assert msgs[2].startswith(f"{human}:5: text 'a' judge 'j1': second answer to Q1")


def test_grades_parquet_as_llm_answers(tmp_path: Path) -> None:
    rubric = Rubric.model_validate({"main": "rel", "questions": [
        {"id": "rel", "options": [0, 1, 2, 3]}, {"id": "FagB", "options": [0, 1]}]})
    rubric = rubric.model_copy(update={"inputs": ["FagB"]})
    df = pd.DataFrame({
        "query_id": ["q1", "q1", "q2"], "passage_id": ["d1", "d2", "d1"], "item_id": ["q1/query", "q1/query", "q2/query"],
        "grader": ["FagB"] * 3, "grade": [1, 0, 1], "answer": ["yes", "no", "yes"],
        "grade_probs": [json.dumps({"yes": 0.8, "no": 0.2}), json.dumps({"yes": 0.1, "no": 0.9}),
                        json.dumps({"yes": 0.6, "no": 0.4})]})
    path = tmp_path / "grades.parquet"
    write_table(path, df)
    got = read_grades_llm(path, rubric)
    assert np.allclose(got.probs["q1/d1"]["FagB"], [0.2, 0.8])  # 'no' -> grade 0, 'yes' -> grade 1
    assert got.groups["q1/d2"] == "q1"


def test_rubric_yaml_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.yaml", "main: Q0\nquestions:\n  - id: Q0\n    options: [1, 2]\n  - id: Q1\n"
                  "    options: [1]\n")
    with pytest.raises(InputError) as exc:
        load_rubric(path)
    msg = _one_problem(exc)
    assert msg.startswith(f"{path}:5: question 2: options: Value error, a question needs at least two answer options")
    bad_main = _write(tmp_path / "m.yaml", "main: Q9\nquestions:\n  - id: Q0\n    options: [1, 2]\n")
    with pytest.raises(InputError, match="main question 'Q9' is not among the questions"):
        load_rubric(bad_main)


def test_rubric_not_given_is_the_bundled_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the checkout, no rubric means the one installed with the package; a path that does not exist is
    an error whose fix does not repeat that path."""
    monkeypatch.chdir(tmp_path)
    assert load_rubric().name == load_rubric(BUNDLED_RUBRIC).name == "llm-rubric-dialogue"
    with pytest.raises(InputError) as exc:
        load_rubric("config/rubric/dialogue.yaml")
    problem = exc.value.problems[0]
    assert str(problem).startswith("config/rubric/dialogue.yaml: rubric file not found")
    assert "config/rubric" not in problem.fix and "bundled" in problem.fix


def test_shipped_dialogue_rubric() -> None:
    r = load_rubric(Path(__file__).resolve().parents[2] / "config" / "rubric" / "dialogue.yaml")
    assert r == load_rubric(BUNDLED_RUBRIC)  # the checkout's path is the bundled file
    assert r.ids == ("Q0", "Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8")
    assert r.option_counts == (4, 4, 4, 4, 4, 4, 4, 4, 3)
    assert [q.id for q in r.questions if q.na] == ["Q2", "Q3", "Q4", "Q5", "Q8"]
