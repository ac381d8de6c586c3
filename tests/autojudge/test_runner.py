"""The TREC AutoJudge track's own runner (``auto-judge run --workflow workflow.yml``, autojudge-base 1.0.0 in its
environment) runs autograde's judge class on the RAG 24 fixture with two graders: the embedded one, and UMBRELA on a
real OpenAI-compatible server on loopback (SmolLM2) reached through the runner's LLM config (OPENAI_BASE_URL,
OPENAI_MODEL), its answers parsed by UMBRELA's repository parser (SmolLM2 writes no quoted JSON key: the PyPI
package's parser would give every passage 0, a leaderboard of ties). Its leaderboard equals what autograde's own workflow (Snakemake, on the fixture's files as they are)
gives, value for value; its qrels are the workflow's, byte for byte; a rerun grades nothing new and sends the server
nothing; the track's tools accept what it wrote (``auto-judge-report check`` the reports, ``auto-judge-evaluate
meta-evaluate`` the leaderboard with autograde's audit values, ``qrel-evaluate`` the qrels)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import TEST_DATA, run_workflow
from support.loopback_server import LoopbackServer, SmolLM2Chat
from support.models import smollm2_model_dir
from support.reference_envs import AUTOJUDGE_BASE_VENV, AUTOJUDGE_VENV, run_tool

from autograde.autojudge.engine import leaderboards_table
from autograde.autojudge.formats import read_leaderboard
from autograde.config.experiment import load_config
from autograde.metrics.rank_agreement import leaderboard_agreement

FIXTURE = TEST_DATA / "autojudge" / "rag24"
WORKFLOW = {
    "judge_class": "autograde.autojudge.judge.AutogradeJudge",
    "create_nuggets": False, "create_qrels": True, "judge_uses_nuggets": False, "qrels_uses_nuggets": False,
    "settings": {
        "filebase": "{_name}", "track": "rag25",
        "autograde": {
            "graders": [{"name": "minilm", "backend": "embedded", "bank": "direct", "options": {"torch_threads": 1}},
                        {"name": "umbrela", "backend": "openai", "bank": "direct", "prompt_class": "UMBRELA@pypi-0.0.7",
                         "scoring": "generate", "thresholds": [2],
                         "options": {"umbrela_parser": "repository", "max_new_tokens": 24, "concurrency": 2}}],
            "qrels": {"thresholds": [4]},
            "evaluation": {"measures": ["ndcg_cut_10", "P_10"]},
        },
    },
}
GRADER_LINE = re.compile(r"autojudge: grader (\w+): (\d+) pairs, (\d+) from the cache, (\d+) computed")


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(SmolLM2Chat.load(smollm2_model_dir())) as srv:
        yield srv


def _run_judge(tmp: Path, server: LoopbackServer) -> tuple[subprocess.CompletedProcess, list[tuple[str, int, int]]]:
    (tmp / "workflow.yml").write_text(yaml.safe_dump(WORKFLOW, sort_keys=False))
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": server.model_name, "CACHE_DIR": str(tmp / "cache"),
           "OPENAI_API_KEY": ""}
    run = run_tool(AUTOJUDGE_BASE_VENV, "autojudge-base-env", "auto-judge", [
        "run", "--workflow", "workflow.yml", "--rag-responses", str(FIXTURE / "runs"), "--rag-topics",
        str(FIXTURE / "topics.jsonl"), "--out-dir", "out"], cwd=tmp, env=env, timeout=1500)
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    graded = [(m.group(1), int(m.group(2)), int(m.group(4))) for m in GRADER_LINE.finditer(run.stderr)]
    return run, graded


def _workflow_on_the_fixture(tmp: Path, judge_config: Path) -> Path:
    """autograde's own workflow on the fixture's files (not the judge's copies), the judge's graders and sections, the
    same grade cache."""
    raw = yaml.safe_load(judge_config.read_text())
    raw["data"] = {"queries": str(FIXTURE / "topics.jsonl"), "answers": [str(FIXTURE / "runs" / "*.jsonl")]}
    raw["results_dir"] = str(tmp / "results")
    cfg = tmp / "config.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    run_workflow(tmp, config=cfg, check=True, timeout=1500)
    return cfg


@pytest.mark.workflow
@pytest.mark.model
@pytest.mark.slow
def test_the_tracks_runner_runs_autograde(tmp_path: Path, server: LoopbackServer) -> None:
    judge = tmp_path / "judge"
    judge.mkdir()
    first, graded = _run_judge(judge, server)
    assert graded == [("minilm", 15, 15), ("umbrela", 15, 15), ("minilm", 15, 0), ("umbrela", 15, 0)]
    requests = sum(server.stats.outcomes.values())
    assert requests == 15  # create_qrels graded; judge read every grade from the cache
    out = judge / "out"
    board = read_leaderboard(out / "default.eval.txt", "ir_measures")

    wf = tmp_path / "workflow"
    wf.mkdir()
    cfg = _workflow_on_the_fixture(wf, out / "default.autograde" / "experiment.yaml")
    ours = leaderboards_table(load_config(cfg))
    key = ["run", "query_id", "measure"]
    pd.testing.assert_frame_equal(board.sort_values(key).reset_index(drop=True),
                                  ours.sort_values(key).reset_index(drop=True), check_exact=True)
    assert len(set(board["measure"])) == 8 and set(board["run"]) == {"good", "medium", "poor", "terse"}
    qrels = (wf / "results" / "qrels" / "minilm" / "max-4.qrels").read_bytes()
    assert (out / "default.qrels.txt").read_bytes() == qrels
    assert sum(server.stats.outcomes.values()) == requests  # the workflow read every grade from the cache

    _, again = _run_judge(judge, server)  # a rerun grades nothing new
    assert [c for _, _, c in again] == [0, 0, 0, 0] and sum(server.stats.outcomes.values()) == requests

    check = run_tool(AUTOJUDGE_BASE_VENV, "autojudge-base-env", "auto-judge-report", [
        "check", str(FIXTURE / "runs" / "good.jsonl"), "--spec", "rag25", "--topics", str(FIXTURE / "topics.jsonl")])
    assert check.returncode == 0, check.stdout + check.stderr

    truth_m, eval_m = "minilm/max-4/ndcg_cut_10", "umbrela/max-2/ndcg_cut_10"
    meta = judge / "meta.jsonl"
    run = run_tool(AUTOJUDGE_VENV, "autojudge-env", "auto-judge-evaluate", [
        "meta-evaluate", "--truth-leaderboard", str(out / "default.eval.txt"), "--truth-format", "ir_measures",
        "--eval-format", "ir_measures", "--truth-measure", truth_m, "--eval-measure", eval_m,
        "--correlation", "kendall", "--correlation", "kendall@3", "--output", str(meta), "--silent",
        str(out / "default.eval.txt")], env={"NLTK_DATA": str(AUTOJUDGE_VENV / "nltk_data")})
    assert run.returncode == 0, run.stdout + run.stderr
    row = json.loads(meta.read_text().splitlines()[0])
    per_query = ours[ours["query_id"] != "all"]
    audit = leaderboard_agreement(per_query[per_query["measure"] == eval_m], per_query[per_query["measure"] == truth_m],
                                  top_k=(3,), samples=0).point
    assert row["kendall"] is not None and abs(row["kendall"] - audit["kendall"]) <= 1e-9
    assert row["kendall@3"] is not None and abs(row["kendall@3"] - audit["kendall@3"]) <= 1e-9

    qrel_eval = run_tool(AUTOJUDGE_VENV, "autojudge-env", "auto-judge-evaluate", [
        "qrel-evaluate", "--truth-qrels", str(wf / "results" / "qrels" / "umbrela" / "max-2.qrels"),
        "--predict-qrels", str(out / "default.qrels.txt"), "--truth-max-grade", "3", "--predict-max-grade", "5",
        "--output", str(judge / "qrel-eval.jsonl")], env={"NLTK_DATA": str(AUTOJUDGE_VENV / "nltk_data")})
    assert qrel_eval.returncode == 0, qrel_eval.stdout + qrel_eval.stderr
    assert len((judge / "qrel-eval.jsonl").read_text().splitlines()) >= 3  # a row per topic


NUGGETS_WORKFLOW = {
    "judge_class": "autograde.autojudge.judge.AutogradeJudge",
    "create_nuggets": True, "create_qrels": False, "judge_uses_nuggets": True, "judge_uses_qrels": False,
    "settings": {
        "filebase": "{_name}",
        "autograde": {
            "bank_generation": {"drafted": {"prompt_class": "QuestionGenerationDL", "items_per_query": 4,
                                            "min_items": 3, "options": {"max_retries": 0}}},
            "graders": [{"name": "qs", "backend": "embedded", "bank": "nuggets", "options": {"torch_threads": 1}}],
            "evaluation": {"measures": ["P_10"]},
            "nuggets": {"bank": "nuggets", "missing_importance": "okay", "measures": ["all_score", "strict_all_score"],
                        "assessors": [{"name": "nug", "grader": "qs", "thresholds": [3, 4]}]},
        },
    },
}


@pytest.mark.model
@pytest.mark.slow
def test_the_runner_makes_nuggets_with_autograde_then_judges_with_them(tmp_path: Path) -> None:
    """create_nuggets drafts a question bank per topic on the runner's LLM (canned answers on a loopback server) and
    returns it as the track's NuggetBanks; the runner writes it, passes it to judge, and autograde grades with it and
    scores the answers' nuggets with it (All scores, the assessor reusing the grader's grades)."""
    from support.canned_banks import CannedChat

    from autograde.io.banks.formats import import_bank

    chat = CannedChat()
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
        (tmp_path / "workflow.yml").write_text(yaml.safe_dump(NUGGETS_WORKFLOW, sort_keys=False))
        run = run_tool(AUTOJUDGE_BASE_VENV, "autojudge-base-env", "auto-judge", [
            "run", "--workflow", "workflow.yml", "--rag-responses", str(FIXTURE / "runs"), "--rag-topics",
            str(FIXTURE / "topics.jsonl"), "--out-dir", "out"], cwd=tmp_path, timeout=1500,
            env={"OPENAI_BASE_URL": srv.base_url, "OPENAI_MODEL": "canned", "CACHE_DIR": str(tmp_path / "cache"),
                 "OPENAI_API_KEY": ""})
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    written = tmp_path / "out" / "default.nuggets.jsonl"
    bank, report = import_bank(written, "autojudge")
    assert not report.dropped and sorted({i.query_id for i in bank.items}) == ["101", "102", "103"]
    assert "Where do bees store nectar while foraging?" in {i.text for i in bank.items}
    board = read_leaderboard(tmp_path / "out" / "default.eval.txt", "ir_measures")
    assert set(board["measure"]) == {"qs/max-4/P_10", "qs/cover-4/cover", "qs/cover-4/ncover",
                                     "nug/nuggets/all_score", "nug/nuggets/strict_all_score"}  # autograde's nugget scores
    graded, _ = import_bank(tmp_path / "out" / "default.autograde" / "data" / "nugget_banks" / "nuggets.jsonl.gz")
    assert sorted(i.item_id for i in graded.items) == sorted(i.item_id for i in bank.items)
