"""autograde's outputs in the TREC AutoJudge track's forms, read back by the track's own package (autojudge-base 1.0.0
in its environment): leaderboards in every format (loaded and written again byte for byte; jsonl, whose loader keeps
values as strings, to the same numbers), qrels (byte for byte), nugget banks (loaded, written again and imported to
the same items); and autograde's own reader of those leaderboards."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from support.reference_envs import AUTOJUDGE_BASE_VENV, run_reference

from autograde.autojudge.formats import LEADERBOARD_FORMATS, leaderboard_lines, read_leaderboard, write_leaderboard
from autograde.core.errors import InputError
from autograde.core.ids import item_id
from autograde.io.banks.formats import export_bank, import_bank
from autograde.io.trec import write_qrels

TARGET = "autojudge-base-env"

LOAD_WRITE = """
import json, sys, tempfile
from pathlib import Path
from autojudge_base.leaderboard.leaderboard import Leaderboard
from autojudge_base.qrels.qrels import read_qrel_file, write_qrel_file
from autojudge_base.nugget_data import load_nugget_banks_from_file, write_nugget_banks
job = json.load(sys.stdin)
out = {}
for path, fmt in job["leaderboards"]:
    p = Path(path)
    files = sorted(p.iterdir()) if p.is_dir() else [p]
    out[path] = {}
    for f in files:
        target = Path(tempfile.mkdtemp()) / f.name
        Leaderboard.load(f, fmt).write(target, fmt)
        out[path][f.name] = target.read_text(encoding="utf-8")
q = Path(job["qrels"])
write_qrel_file(qrel_out_file=q.with_name("again.qrels"), qrels=read_qrel_file(q))
out["qrels"] = q.with_name("again.qrels").read_text(encoding="utf-8")
banks = load_nugget_banks_from_file(job["banks"])
write_nugget_banks(banks, job["banks_again"])
out["bank_topics"] = sorted(banks.banks)
print(json.dumps(out))
"""


def _table() -> pd.DataFrame:
    """Three runs, two topics, two measures; run c lacks measure m2 on topic 2 (a sparse leaderboard) and its values
    need all 17 digits."""
    rows = [("a", "1", "m1", 0.5), ("a", "1", "m2", 1.0), ("a", "2", "m1", 0.25), ("a", "2", "m2", 0.0),
            ("b", "1", "m1", 0.1 + 0.2), ("b", "1", "m2", 2 / 3), ("b", "2", "m1", 1e-17), ("b", "2", "m2", 1.0),
            ("c", "2", "m1", 0.75), ("c", "1", "m1", 0.125), ("c", "1", "m2", 0.5),
            ("a", "all", "m1", 0.375), ("a", "all", "m2", 0.5), ("b", "all", "m1", 0.15000000000000002),
            ("b", "all", "m2", 5 / 6), ("c", "all", "m1", 0.4375), ("c", "all", "m2", 0.5)]
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def _bank(path: Path) -> None:
    items = [("1", "What do bees collect?", ["nectar"]), ("1", "Where is nectar stored?", []),
             ("2", "What pulls the tides?", ["the moon", "the sun"])]
    lines = []
    for q in ("1", "2"):
        lines.append(json.dumps({"query_id": q, "query_text": f"query {q}", "info": {"prompt_target": "questions"},
                                 "items": [{"query_id": q, "question_id": item_id(q, t), "question_text": t,
                                            **({"gold_answers": g} if g else {})}
                                           for qq, t, g in items if qq == q]}))
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def test_leaderboards_qrels_and_banks_round_trip_through_the_tracks_package(tmp_path: Path) -> None:
    table = _table()
    files = {}
    for fmt in LEADERBOARD_FORMATS:
        target = tmp_path / (f"lb-{fmt}" if fmt == "trec_eval" else f"lb.{fmt}")
        write_leaderboard(target, table, fmt)
        files[str(target)] = fmt
    qrels = tmp_path / "ours.qrels"
    write_qrels(qrels, {"2": {"d9": 1, "d10": 0}, "10": {"x": 3}, "1": {"b": 2, "a": 0}})
    bank = tmp_path / "bank.jsonl.gz"
    _bank(bank)
    ours_bank, _ = import_bank(bank)
    export_bank(ours_bank, tmp_path / "bank.autojudge.jsonl", "autojudge")
    theirs = run_reference(AUTOJUDGE_BASE_VENV, TARGET, LOAD_WRITE, {
        "leaderboards": list(files.items()), "qrels": str(qrels), "banks": str(tmp_path / "bank.autojudge.jsonl"),
        "banks_again": str(tmp_path / "bank.again.jsonl")})
    for path, fmt in files.items():
        p = Path(path)
        for name, text in theirs[path].items():
            ours = (p / name if p.is_dir() else p).read_text(encoding="utf-8")
            if fmt == "jsonl":  # the track's loader keeps values as strings: the same numbers, quoted
                a = [json.loads(line) for line in ours.splitlines()]
                b = [json.loads(line) for line in text.splitlines()]
                assert [{**r, "value": float(r["value"])} for r in b] == a
            else:
                assert text == ours, (fmt, name)
        back = read_leaderboard(p, fmt)
        key = ["run", "query_id", "measure"]
        pd.testing.assert_frame_equal(back.sort_values(key).reset_index(drop=True),
                                      table.sort_values(key).reset_index(drop=True))
    assert theirs["qrels"] == qrels.read_text(encoding="utf-8")
    assert theirs["bank_topics"] == ["1", "2"]
    again, report = import_bank(tmp_path / "bank.again.jsonl", "autojudge")
    assert not report.dropped
    assert sorted((i.item_id, i.text, tuple(i.gold_answers or ())) for i in again.items) == sorted(
        (i.item_id, i.text, tuple(i.gold_answers or ())) for i in ours_bank.items)


def test_formats_columns_and_order() -> None:
    lines = leaderboard_lines(_table(), "tot")
    assert lines[0] == "a\tm1\t1\t0.5" and lines[-1] == "c\tm2\tall\t0.5"
    assert leaderboard_lines(_table(), "rag4reports")[2] == "2\ta\tm1\t0.25"
    assert json.loads(leaderboard_lines(_table(), "jsonl")[4]) == {"run_id": "b", "topic_id": "1", "measure": "m1",
                                                                   "value": 0.30000000000000004}
    c2 = [line for line in leaderboard_lines(_table(), "ir_measures") if line.startswith("c\t2")]
    assert c2 == ["c\t2\tm1\t0.75"]  # sparse: only what autograde has


def test_a_bad_leaderboard_line_names_its_line(tmp_path: Path) -> None:
    p = tmp_path / "lb.txt"
    p.write_text("a 1 m 0.5\na 1 m\na 1 m x\n")
    with pytest.raises(InputError) as err:
        read_leaderboard(p, "ir_measures")
    assert [q.line for q in err.value.problems] == [2, 3] and all(q.fix for q in err.value.problems)
