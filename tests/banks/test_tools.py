"""Bank tools: stats, diff, merge, init-edit (CLI and functions), on hand-made banks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autograde.banks.tools import bank_stats, diff_banks, merge_banks
from autograde.cli import main
from autograde.core.ids import item_id
from autograde.io.banks.model import Bank, BankItem, write_bank
from autograde.io.banks.read import read_bank


def bank(rows: list[tuple[str, str]], kind: str = "question", gold: dict[str, tuple[str, ...]] | None = None) -> Bank:
    return Bank([BankItem(item_id(q, t), q, kind, t, (gold or {}).get(t, ())) for q, t in rows])


OLD = bank([("q1", "Where do bees store nectar while foraging?"), ("q1", "How do bees remove water from nectar?"),
            ("q2", "Which celestial bodies cause tides?"), ("q2", "When do spring tides occur?")])


def test_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = bank([("q1", "When did rock begin?"), ("q1", "when did Rock begin"), ("q1", "Who played first?"),
              ("q2", "What causes tides?")])
    s = bank_stats(b, {"q1": "", "q2": "", "q3": ""})
    assert s["queries"] == 2 and s["items"] == 4 and s["per_query"] == {"q1": 3, "q2": 1}
    assert s["items_per_query"]["max"] == 3 and s["words_per_item"]["min"] == 3 and s["words_per_item"]["max"] == 4
    assert [(d["text"], d["same_as_text"]) for d in s["near_duplicates"]] == [("when did Rock begin",
                                                                               "When did rock begin?")]
    assert s["queries_without_items"] == ["q3"]
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps({"query_id": "q1", "items": [{"question_text": "A?"}, {"question_text": "A?"},
                                                          {"question_text": ""}]}) + "\n")
    assert main(["bank", "stats", str(p)]) == 2  # refused as the workflow refuses it
    err = capsys.readouterr().err
    assert "b.jsonl:1: item 1 repeats the text of an earlier item of query 'q1'" in err
    assert "b.jsonl:1: item 2 of query 'q1' has empty text" in err
    p.write_text(json.dumps({"query_id": "q1", "items": [{"question_text": "A?"}]}) + "\n")
    assert main(["bank", "stats", str(p)]) == 0
    assert capsys.readouterr().out.startswith("1 items (1 questions; 0 with gold answers) for 1 queries")


def test_diff_added_removed_changed() -> None:
    new = bank([("q1", "Where do bees store nectar while foraging?"), ("q1", "How do bees remove water from honey?"),
                ("q2", "Which celestial bodies cause tides?"), ("q2", "What is a neap tide?"),
                ("q3", "What makes sourdough rise?")], gold={"Which celestial bodies cause tides?": ("the moon",)})
    d = diff_banks(OLD, new)
    assert d["only_in_b"] == ["q3"] and d["only_in_a"] == []
    q1, q2 = d["queries"]["q1"], d["queries"]["q2"]
    assert [(c["old"], c["new"]) for c in q1["changed"]] == [("How do bees remove water from nectar?",
                                                              "How do bees remove water from honey?")]
    assert q1["added"] == q1["removed"] == [] and q1["unchanged"] == 1
    assert [c["what"] for c in q2["changed"]] == ["kind or gold answers"]
    assert [r["text"] for r in q2["removed"]] == ["When do spring tides occur?"]
    assert [a["text"] for a in q2["added"]] == ["What is a neap tide?"]
    assert d["totals"] == {"added": 2, "removed": 1, "changed": 2, "unchanged": 1}


def test_merge() -> None:
    other = bank([("q2", "When do spring tides occur?"), ("q2", "What is a neap tide?"), ("q3", "What makes sourdough rise?")],
                 gold={"When do spring tides occur?": ("at new and full moon",)})
    merged, notes = merge_banks([("old", OLD), ("other", other)])
    assert [i.text for i in merged.items] == [
        "Where do bees store nectar while foraging?", "How do bees remove water from nectar?",
        "Which celestial bodies cause tides?", "When do spring tides occur?", "What is a neap tide?",
        "What makes sourdough rise?"]
    assert merged.items[3].gold_answers == ("at new and full moon",)
    assert notes == [f"other: {item_id('q2', 'When do spring tides occur?')}: gold answers joined (1 added)"]


def test_init_edit_copies_once(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = yaml.safe_load(mini.read_text())
    del raw["banks"]
    raw["bank_generation"] = {"questions": {"backend": "openai", "model": "m", "options": {"base_url": "http://x/v1"}}}
    mini.write_text(yaml.safe_dump(raw))
    assert main(["bank", "init-edit", "--config", str(mini), "--bank", "questions"]) == 2
    assert "results/banks/questions.jsonl.gz: the generated bank does not exist yet" in capsys.readouterr().err
    generated = mini.parent / "results/banks/questions.jsonl.gz"
    generated.parent.mkdir(parents=True)
    write_bank(generated, read_bank(mini.parent / "data/questions.jsonl"))
    assert main(["bank", "init-edit", "--config", str(mini), "--bank", "questions"]) == 0
    edited = mini.parent / "banks/questions.edited.jsonl"
    assert read_bank(edited).items == read_bank(generated).items
    assert "set bank_generation.questions.grade_with: edited" in capsys.readouterr().out
    edited.write_text(edited.read_text().replace("When do spring tides occur?", "When exactly do spring tides occur?"))
    assert main(["bank", "init-edit", "--config", str(mini), "--bank", "questions"]) == 2
    assert "the edited copy exists already and may hold your edits" in capsys.readouterr().err
    assert "When exactly" in edited.read_text()  # not overwritten
    assert main(["bank", "diff", str(generated), str(edited)]) == 0
    out = capsys.readouterr().out
    assert "~ " in out and "'When do spring tides occur?' -> 'When exactly do spring tides occur?'" in out


def _nugget_bank(path: Path) -> tuple[str, str]:
    """A two-nugget bank file: one vital, one without importance; returns their ids."""
    vital, other = item_id("q1", "Bees collect nectar"), item_id("q1", "Bees fan the nectar")
    path.write_text(json.dumps({"query_id": "q1", "items": [
        {"query_id": "q1", "nugget_id": vital, "nugget_text": "Bees collect nectar", "info": {"importance": "vital"}},
        {"query_id": "q1", "nugget_id": other, "nugget_text": "Bees fan the nectar"}]}) + "\n")
    return vital, other


def test_set_importance_counts_real_changes_and_leaves_an_unchanged_bank_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nuggets.jsonl"
    vital, other = _nugget_bank(path)
    main(["bank", "set-importance", str(path), "--set", f"{other}=okay", "--out", str(path)])  # workbench format
    before = path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino
    capsys.readouterr()
    assert main(["bank", "set-importance", str(path), "--set", f"{vital}=vital", "--out", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] == 0 and report["unchanged"] == 1 and report["written"] is False
    assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino) == before  # not rewritten
    assert main(["bank", "set-importance", str(path), "--set", f"{vital}=okay", "--set", f"{other}=okay",
                 "--out", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] == 1 and report["unchanged"] == 1 and report["written"] is True
    assert {it.item_id: it.info for it in read_bank(path).items} == {vital: {"importance": "okay"},
                                                                      other: {"importance": "okay"}}


def test_diff_reports_importance_and_other_info_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    vital, other = _nugget_bank(old)
    main(["bank", "set-importance", str(old), "--set", f"{vital}=okay", "--set", f"{other}=vital", "--out", str(new)])
    d = diff_banks(read_bank(old), read_bank(new))
    assert d["totals"] == {"added": 0, "removed": 0, "changed": 2, "unchanged": 0}
    assert [(c["old_id"], c["what"], c["info"]) for c in d["queries"]["q1"]["changed"]] == [
        (vital, "info", {"importance": ["vital", "okay"]}), (other, "info", {"importance": [None, "vital"]})]
    capsys.readouterr()
    assert main(["bank", "diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 added, 0 removed, 2 changed, 0 unchanged items in 1 queries")
    assert f"~ {vital}  'Bees collect nectar': importance vital -> okay" in out
    assert f"~ {other}  'Bees fan the nectar': importance (none) -> vital" in out
