"""The `autograde nuggets` commands and `autograde bank set-importance` on real files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from support.helpers import REPO, TEST_DATA

from autograde.cli import build_parser, main
from autograde.io.banks.read import read_bank

HAND_MADE = TEST_DATA / "nuggets" / "assignments.jsonl"
EXAMPLE_BANK = REPO / "config" / "example" / "bank" / "nuggets.jsonl"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_the_new_commands_has_help() -> None:
    top = _subparsers(build_parser())
    parsers = [*_subparsers(top["nuggets"]).values(), _subparsers(top["bank"])["set-importance"]]
    for p in parsers:
        for action in p._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, f"{p.prog}: {action.dest} has no help text"


def test_score_writes_the_reference_format_and_compare_agrees(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ours.jsonl"
    assert main(["nuggets", "score", "--assignments", str(HAND_MADE), "--out", str(out), "--weighted"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split("\t") == ["run", "all_score", "strict_all_score", "vital_score", "strict_vital_score",
                                    "weighted_score", "strict_weighted_score"]
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["qid"] for x in lines] == ["q1", "q2", "q3", "q4", "q5", "all"]
    assert list(lines[0]) == ["qid", "strict_vital_score", "strict_all_score", "vital_score", "all_score",
                              "strict_weighted_score", "weighted_score"]
    assert lines[1]["vital_score"] == 0.0 and lines[0]["weighted_score"] == (1 + 0.5 + 0 + 0.5 * (1 + 0.5 + 0)) / 4.5
    assert main(["nuggets", "compare", str(out), str(out)]) == 0
    other = tmp_path / "theirs.jsonl"
    other.write_text(out.read_text().replace('"all_score": 0.5,', '"all_score": 0.5000001,', 1))
    assert main(["nuggets", "compare", str(out), str(other)]) == 1


def test_set_importance_and_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = read_bank(EXAMPLE_BANK)
    first, second = bank.items[0], bank.items[1]
    out = tmp_path / "bank.jsonl"
    labels = tmp_path / "labels.tsv"
    labels.write_text(f"{first.item_id}\tokay\n{second.item_id}\tvital\n")
    assert main(["bank", "set-importance", str(EXAMPLE_BANK), "--from-file", str(labels), "--clear",
                 bank.items[2].item_id, "--out", str(out)]) == 0
    got = {it.item_id: (it.info or {}).get("importance") for it in read_bank(out).items}
    assert got[first.item_id] == "okay" and got[second.item_id] == "vital" and got[bank.items[2].item_id] is None
    capsys.readouterr()
    assert main(["bank", "stats", str(out)]) == 0
    assert "importance: 32 vital, 47 okay, 1 unset" in capsys.readouterr().out
    # --only-missing: the hand-set importance stays, the open one is filled
    assert main(["bank", "set-importance", str(out), "--from-file", str(labels), "--set",
                 f"{bank.items[2].item_id}=okay", "--only-missing", "--out", str(out)]) == 0
    got = {it.item_id: (it.info or {}).get("importance") for it in read_bank(out).items}
    assert got[first.item_id] == "okay" and got[bank.items[2].item_id] == "okay"
    bad = tmp_path / "bad.tsv"
    bad.write_text(f"{first.item_id}\tcritical\n")
    assert main(["bank", "set-importance", str(out), "--from-file", str(bad), "--out", str(out)]) == 2
    assert f"{bad}:1: importance 'critical'" in capsys.readouterr().err


def test_score_says_what_it_read_how(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nuggetizer's own files (no answer_text, the 'failed' label) are scored, and the command says how it read them."""
    path = tmp_path / "run-x.jsonl"
    path.write_text(json.dumps({"qid": "q1", "nuggets": [{"text": "a", "importance": "vital", "assignment": "failed"},
                                                         {"text": "b", "importance": "okay", "assignment": "support"}]})
                    + "\n")
    assert main(["nuggets", "score", "--assignments", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].split("\t")[:2] == ["run-x", "0.5000"]
    assert f"{path}: 1 of 1 answers have no 'answer_text'" in err
    assert "1 nuggets assigned 'failed'" in err and "scored as not_support" in err


def test_compare_passes_when_every_shared_value_agrees_and_summarises_one_sided_keys(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--weighted adds two measures the reference scorer does not write: not a disagreement (the help says exit 1
    only above --tolerance); one-sided measures and answers are summarised, not listed key by key."""
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    assert main(["nuggets", "score", "--assignments", str(HAND_MADE), "--out", str(ours), "--weighted"]) == 0
    lines = [json.loads(x) for x in ours.read_text().splitlines()]
    reference = ["qid", "strict_vital_score", "strict_all_score", "vital_score", "all_score"]
    theirs.write_text("".join(json.dumps({k: x[k] for k in reference}) + "\n" for x in lines))
    capsys.readouterr()
    assert main(["nuggets", "compare", str(ours), str(theirs)]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["agree"] is True and cmp["compared"] == 6 * 4 and cmp["max_abs_diff"] == 0.0
    assert cmp["measures_only_ours"] == ["strict_weighted_score", "weighted_score"]
    assert cmp["measures_only_theirs"] == [] and cmp["answers_only_ours"]["count"] == 0
    assert "only_ours" not in cmp  # no key-by-key dump

    # many answers on one side only: counted, a few shown, and a disagreement (nothing to compare them with)
    many = tmp_path / "many.jsonl"
    extra = [{"qid": f"x{k}", "strict_vital_score": 0.0, "strict_all_score": 0.0, "vital_score": 0.0,
              "all_score": 0.0} for k in range(200)]
    many.write_text(theirs.read_text() + "".join(json.dumps(x) + "\n" for x in extra))
    assert main(["nuggets", "compare", str(ours), str(many)]) == 1
    text = capsys.readouterr().out
    cmp = json.loads(text)
    assert cmp["agree"] is False and cmp["answers_only_theirs"]["count"] == 200
    assert len(cmp["answers_only_theirs"]["first"]) <= 5 and len(text) < 3000
