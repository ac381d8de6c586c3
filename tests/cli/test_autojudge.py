"""``autograde autojudge``: the track's report checks (exit 2 with every problem's file, line and fix; smells only
warn), conversion to another track's format, an experiment's leaderboards in the track's formats (every leaderboard,
the human one in a file of its own), and the page fix (idempotent)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.helpers import TEST_DATA

from autograde.autojudge.annotate import PAGE_FIX
from autograde.cli import main
from autograde.core.errors import Problems
from autograde.io.reports import iter_reports

FIXTURES = TEST_DATA / "autojudge"


def test_check_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = str(FIXTURES / "ragtime" / "runs" / "*.jsonl")
    assert main(["autojudge", "check", runs, "--track", "ragtime26", "--topics",
                 str(FIXTURES / "ragtime" / "topics.jsonl")]) == 0
    assert json.loads(capsys.readouterr().out) == {"track": "ragtime26", "errors": 0, "warnings": 2}  # beta lacks run_desc
    assert main(["autojudge", "check", runs, "--track", "ragtime26", "--strict"]) == 2
    assert main(["autojudge", "check", str(FIXTURES / "rag24" / "runs" / "good.jsonl"), "--track", "dragun25"]) == 2
    err = capsys.readouterr().err
    assert "good.jsonl:1: dragun25: responses[0] cites in the rag24 form" in err and "(fix: cite in a form" in err


def test_convert_reports(tmp_path: Path) -> None:
    out = tmp_path / "good.ragtime.jsonl"
    assert main(["autojudge", "convert", str(FIXTURES / "rag24" / "runs" / "good.jsonl"), "--track", "ragtime26",
                 "--out", str(out)]) == 0
    reports = list(iter_reports(out, Problems()))
    assert [r.forms for r in reports] == [("ragtime",)] * 3 and reports[0].sentences_key == "responses"
    assert reports[0].sentences[1]["citations"] == {"msmarco_v2.1_doc_01_1000#0_3000": 1.0,
                                                    "msmarco_v2.1_doc_01_1001#1_3004": 0.5}


def test_page_fix_is_idempotent(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body>\n<script>\n(function() {\nif (!supabaseClient) x();\n})();\n</script></body></html>")
    assert main(["autojudge", "page-fix", str(page)]) == 0
    once = page.read_text()
    assert once.count(PAGE_FIX) == 1 and once.index(PAGE_FIX) < once.index("(function() {")
    assert main(["autojudge", "page-fix", str(page)]) == 0 and page.read_text() == once
    (tmp_path / "other.html").write_text("<html>supabaseClient</html>")
    assert main(["autojudge", "page-fix", str(tmp_path / "other.html")]) == 2


@pytest.mark.model
def test_export_an_experiments_leaderboards(tmp_path: Path) -> None:
    import yaml

    from autograde.autojudge.engine import leaderboards_table, run_stages, write_experiment, write_judge_inputs
    from autograde.autojudge.formats import read_leaderboard
    from autograde.autojudge.settings import JudgeSettings, LlmConfig, experiment_sections
    from autograde.config.experiment import load_config
    from autograde.io.trec import read_qrels, write_qrels

    topics = [json.loads(line) for line in (FIXTURES / "rag24" / "topics.jsonl").read_text().splitlines()]
    reports = [r.record for p in sorted((FIXTURES / "rag24" / "runs").glob("*.jsonl")) for r in iter_reports(p, Problems())]
    inputs = write_judge_inputs(tmp_path / "w", topics, reports)
    path = write_experiment(tmp_path / "w", experiment_sections(JudgeSettings(backend="embedded"), LlmConfig("m")),
                            inputs, tmp_path / "cache")
    run_stages(load_config(path))
    qrels = read_qrels(tmp_path / "w" / "results" / "qrels" / "minilm" / "max-4.qrels")
    human = tmp_path / "human.qrels"  # a reference: each query's passages graded 4 or more, relevant
    write_qrels(human, {q: {d: int(g >= 4) for d, g in docs.items()} for q, docs in qrels.items()})
    raw = yaml.safe_load(path.read_text())
    raw["data"]["qrels"] = str(human)
    path.write_text(yaml.safe_dump(raw))
    config = load_config(path)
    run_stages(config)
    out = tmp_path / "export"
    assert main(["autojudge", "export", "--config", str(path), "--out", str(out)]) == 0
    table = leaderboards_table(config)
    written = pd.concat([read_leaderboard(out / "autograde.txt"), read_leaderboard(out / "human.txt")])
    key = ["run", "query_id", "measure"]
    pd.testing.assert_frame_equal(written.sort_values(key).reset_index(drop=True),
                                  table.sort_values(key).reset_index(drop=True), check_exact=True)
    assert set(read_leaderboard(out / "human.txt")["measure"]) == {f"human/-/{m}" for m in config.evaluation.measures}
