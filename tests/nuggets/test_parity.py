"""Our nugget scores equal the reference scorer's (PyPI ``nuggetizer``, run in its own environment) to 1e-12.

The reference package ships no example data (its 0.0.5 wheel and sdist hold code only), so the files are: the
hand-made ``tests/data/nuggets/assignments.jsonl`` (every importance x assignment pair, a query without vital
nuggets, an answer whose query has no nuggets) and a seeded random file of 300 answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from support.helpers import TEST_DATA
from support.nuggetizer import NUGGETIZER_VERSION, reference_scores

from autograde.grading.nugget_labels import ASSIGNMENT_LABELS, IMPORTANCE_LABELS
from autograde.nuggets.interchange import (
    compare_scores,
    read_assignments,
    read_reference_scores,
    reading_notes,
    reference_lines,
)

HAND_MADE = TEST_DATA / "nuggets" / "assignments.jsonl"
TOLERANCE = 1e-12


def _ours(path: Path, out: Path) -> Path:
    out.write_text("".join(reference_lines(read_assignments(path))))
    return out


def _theirs(path: Path, out: Path) -> Path:
    ref = reference_scores(path)
    assert ref["version"] == NUGGETIZER_VERSION
    out.write_text("".join(json.dumps(line) + "\n" for line in ref["lines"]))
    return out


def _check(path: Path, tmp_path: Path) -> dict:
    ours = read_reference_scores(_ours(path, tmp_path / "ours.jsonl"))
    theirs = read_reference_scores(_theirs(path, tmp_path / "theirs.jsonl"))
    cmp = compare_scores(ours, theirs, TOLERANCE)
    assert cmp["agree"] and not cmp["measures_only_ours"] and not cmp["measures_only_theirs"], cmp
    assert cmp["compared"] == len(theirs) == len(ours)
    assert cmp["max_abs_diff"] <= TOLERANCE, cmp
    return cmp


def test_hand_made_file_equals_the_reference(tmp_path: Path) -> None:
    cmp = _check(HAND_MADE, tmp_path)
    assert cmp["max_abs_diff"] == 0.0  # the same arithmetic: bit for bit
    theirs = read_reference_scores(tmp_path / "theirs.jsonl").set_index(["query_id", "measure"])["value"]
    assert theirs[("q2", "vital_score")] == 0.0 and theirs[("q2", "strict_vital_score")] == 0.0  # no vital nugget
    assert theirs[("q2", "all_score")] == 0.5  # (1 + 0.5 + 0) / 3
    assert theirs[("q1", "vital_score")] == 0.5 and theirs[("q1", "strict_all_score")] == 2 / 6
    assert theirs[("q5", "all_score")] == 0.0  # no nuggets at all
    labels = {(i, a) for line in HAND_MADE.read_text().splitlines()
              for n in json.loads(line)["nuggets"] for i, a in [(n["importance"], n["assignment"])]}
    assert labels == {(i, a) for i in IMPORTANCE_LABELS for a in ASSIGNMENT_LABELS}  # every label pair covered


def test_random_file_equals_the_reference(tmp_path: Path) -> None:
    rng = random.Random(20)
    lines = []
    for k in range(300):
        n = rng.randint(0, 12)
        nuggets = [{"text": f"nugget {j}", "importance": rng.choice(IMPORTANCE_LABELS),
                    "assignment": rng.choice(ASSIGNMENT_LABELS)} for j in range(n)]
        lines.append(json.dumps({"qid": f"q{k}", "run_id": "r", "answer_text": f"answer {k}", "nuggets": nuggets}))
    path = tmp_path / "random.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "cmp").mkdir()
    _check(path, tmp_path / "cmp")


NUGGETIZER_TEST_RECORD = {"qid": "q1", "nuggets": [
    {"text": "a", "importance": "vital", "assignment": "support"},
    {"text": "b", "importance": "okay", "assignment": "partial_support"}]}
"""The record of nuggetizer's own test of ``scripts/calculate_metrics.py``: no ``answer_text``, no ``run_id``."""


def test_nuggetizer_own_test_record_equals_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "assignments.jsonl"
    path.write_text(json.dumps(NUGGETIZER_TEST_RECORD) + "\n")
    _check(path, tmp_path)
    ours = read_reference_scores(tmp_path / "ours.jsonl").set_index(["query_id", "measure"])["value"]
    # the values nuggetizer's test expects
    assert {m: ours[("q1", m)] for m in ("strict_vital_score", "strict_all_score", "vital_score", "all_score")} == {
        "strict_vital_score": 1.0, "strict_all_score": 0.5, "vital_score": 1.0, "all_score": 0.75}
    answers = read_assignments(path)
    assert answers[0].answer_text == "" and answers[0].run == "assignments"
    notes = "\n".join(reading_notes(answers))
    assert "1 of 1 answers have no 'answer_text'" in notes and "1 of 1 lines have no 'run_id'" in notes


def test_failed_labels_and_missing_or_empty_answer_text_equal_the_reference(tmp_path: Path) -> None:
    """nuggetizer writes assignment "failed" (and importance "failed") when its LLM call fails, and
    ``"answer_text": ""`` for a run without an answer to a query: it scores all of them; so do we, the same way."""
    records = [
        {"qid": "q1", "run_id": "r", "answer_text": "x", "nuggets": [
            {"text": "n1", "importance": "vital", "assignment": "failed"},
            {"text": "n2", "importance": "vital", "assignment": "support"},
            {"text": "n3", "importance": "okay", "assignment": "failed"}]},
        {"qid": "q2", "run_id": "r", "answer_text": "", "nuggets": [
            {"text": "n1", "importance": "failed", "assignment": "support"},
            {"text": "n2", "importance": "vital", "assignment": "not_support"}]},
        {"qid": "q3", "run_id": "r", "nuggets": [
            {"text": "n1", "importance": "failed", "assignment": "failed"},
            {"text": "n2", "importance": "okay", "assignment": "partial_support"}]},
        {"qid": "q4", "run_id": "r", "answer_text": None, "nuggets": [
            {"text": "n1", "importance": "failed", "assignment": "partial_support"}]},
    ]
    path = tmp_path / "failed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    _check(path, tmp_path)
    answers = read_assignments(path)
    assert [a.labels() for a in answers][0] == [("vital", "failed"), ("vital", "support"), ("okay", "failed")]
    notes = "\n".join(reading_notes(answers))
    assert "3 nuggets assigned 'failed'" in notes and "scored as not_support" in notes
    assert "3 nuggets of importance 'failed'" in notes and "scored as okay" in notes
    assert "2 of 4 answers have no 'answer_text'" in notes and "1 of 4 answers have an empty 'answer_text'" in notes
