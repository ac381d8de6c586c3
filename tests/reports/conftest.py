"""Fixtures of the report tests: a headless
Chromium (installed with apt-get when missing and running as root, else the browser tests skip, saying why)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _find_chromium() -> str | None:
    return next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of the Chromium executable that ``make system-deps`` installs (``make test`` runs it first). Missing
    without root: the browser tests skip (README "Set-up" says why); missing as root: a failure."""
    found = _find_chromium()
    if found:
        return found
    if os.geteuid() != 0:
        pytest.skip("chromium is not installed and this is not root (make system-deps as root installs it, or: "
                    "apt-get install chromium)")
    pytest.fail("chromium is not installed although this is root: run make system-deps (make test runs it first)")


@pytest.fixture(scope="session")
def grid_full_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder and site from the real FLAN-T5-large grid of DL20 query 940547 (310 passages x 10
    questions, TREC judgments): the site at the size of a real query. Returns the results folder."""
    import json

    import pandas as pd
    from support.helpers import shared_data

    from autograde.config.reports import ReportsConfig
    from autograde.core.tables import write_table
    from autograde.io.banks.model import Bank, BankItem, write_bank
    from autograde.reports.site import build_site
    from autograde.reports.stages import GraderReportSpec, grader_report_files, run_grader_reports

    rows = [json.loads(line) for line in shared_data("dl20-rocknroll-grid", "grid-full.jsonl").open(encoding="utf-8")]
    df = pd.DataFrame(rows)
    r = tmp_path_factory.mktemp("grid-full") / "results"
    grades = df.rename(columns={"question_id": "item_id", "flan_t5_large_rating": "grade",
                                "flan_t5_large_answer": "answer"})[["query_id", "passage_id", "item_id", "grade", "answer"]]
    grades = grades.assign(grader="flan", raw=grades["answer"], parse_status="ok")
    write_table(r / "grades" / "flan.parquet", grades, ["query_id", "passage_id", "item_id"])
    judged = df[df["judgment"].notna()][["query_id", "passage_id", "judgment"]].drop_duplicates()
    write_table(r / "ingest" / "judgments.parquet",
                judged.rename(columns={"judgment": "relevance"}).astype({"relevance": "int64"}), None)
    write_table(r / "ingest" / "queries.parquet", pd.DataFrame({"query_id": ["940547"],
                                                                "query_text": [rows[0]["query_text"]]}), None)
    pool = df[["query_id", "passage_id", "passage_text"]].drop_duplicates().rename(columns={"passage_text": "text"})
    write_table(r / "pool" / "pool.parquet", pool.assign(n_systems=0), None)
    qs = df[["question_id", "question_text"]].drop_duplicates()
    bank = r.parent / "questions.jsonl"
    write_bank(bank, Bank([BankItem(i, "940547", "question", t) for i, t in qs.itertuples(index=False)]))
    spec = GraderReportSpec("flan", ["max-4", "count-4"], [4, 5], ["ndcg_cut_10"], "zero", 2, str(bank))
    run_grader_reports(spec, ReportsConfig(), r / "grades" / "flan.parquet", r / "ingest" / "judgments.parquet",
                       r / "ingest" / "rankings.parquet", r / "ingest" / "queries.parquet", {},
                       grader_report_files(r, "flan"))
    build_site(r, r / "site", ReportsConfig(), ["flan"], None)
    return r
