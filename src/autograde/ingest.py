"""Stage 1, ingest: read and check every input, write the normalized tables.

All problems of all inputs are collected and raised together, before any grading starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from autograde.config import Config, expand_globs
from autograde.errors import Problems
from autograde.io.answers import read_answers
from autograde.io.bank import Bank, read_bank
from autograde.io.queries import read_queries
from autograde.io.trec import Qrels, read_qrels, read_run
from autograde.log import logger
from autograde.tables import write_table


@dataclass
class Inputs:
    """The checked inputs as tables."""

    queries: pd.DataFrame  # query_id, query_text
    rankings: pd.DataFrame  # run, query_id, passage_id, rank, score, source
    answer_passages: pd.DataFrame  # query_id, passage_id, text
    judgments: pd.DataFrame  # query_id, passage_id, relevance


def read_official_leaderboard(path: str | Path, problems: Problems) -> dict[str, float]:
    """Official leaderboard ``{run: rank}``."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        problems.add(path, None, "file not found", "check data.official_leaderboard in the config")
        return {}
    except json.JSONDecodeError as exc:
        problems.add(path, exc.lineno, f"not valid JSON: {exc.msg}", 'write {"run": rank, ...}')
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        problems.add(path, None, "expected a JSON object {run_name: rank}", 'write {"run": rank, ...}')
        return {}
    return {str(k): float(v) for k, v in data.items()}


def read_banks(config: Config, problems: Problems, queries: dict[str, str] | None = None) -> dict[str, Bank]:
    """Every configured bank; items of queries unknown to the queries file are problems."""
    banks: dict[str, Bank] = {}
    for name, path in config.banks.items():
        bank = read_bank(path, problems)
        if queries is not None:
            for qid in sorted({i.query_id for i in bank.items} - set(queries)):
                problems.add(path, None, f"test bank has items for query {qid!r}, which is not in {config.data.queries}",
                             "fix the query id or add the query")
        banks[name] = bank
    return banks


def ingest(config: Config) -> Inputs:
    """Read queries, runs, answers and qrels; raise one InputError listing every problem.

    Banks are checked separately (:func:`read_banks`, at workflow parse time), so that a bank edit
    never reruns ingest and the pool.
    """
    probs = Problems()
    queries = read_queries(config.data.queries, probs)
    rows: list[tuple[str, str, str, int, float, str]] = []
    tags_seen: dict[str, str] = {}
    for path in expand_globs(config.data.runs):
        rf = read_run(path, probs)
        for tag, run in rf.runs.items():
            if tag in tags_seen:
                probs.add(path, None, f"run tag {tag!r} also appears in {tags_seen[tag]}", "give every run a unique tag")
                continue
            tags_seen[tag] = path
            for qid, docs in run.items():
                if queries and qid not in queries:
                    probs.add(path, rf.first_line[(tag, qid)], f"query id {qid!r} is not in {config.data.queries}",
                              "fix the query id or add the query to the queries file")
                    continue
                for doc, score in docs.items():
                    rows.append((tag, qid, doc, rf.ranks[tag][qid][doc], score, "run"))
    answer_rows: list[tuple[str, str, str]] = []
    for path in expand_globs(config.data.answers):
        for ap in read_answers(path, config.answers.max_words, probs):
            if ap.run in tags_seen and tags_seen[ap.run] != path:
                probs.add(path, None, f"answer run {ap.run!r} also appears in {tags_seen[ap.run]}",
                          "give every system a unique name")
                continue
            tags_seen.setdefault(ap.run, path)
            if queries and ap.query_id not in queries:
                probs.add(path, None, f"query id {ap.query_id!r} of run {ap.run!r} is not in {config.data.queries}",
                          "fix the query id or add the query")
                continue
            rows.append((ap.run, ap.query_id, ap.passage_id, ap.rank, float(-ap.rank), "answer"))
            answer_rows.append((ap.query_id, ap.passage_id, ap.text))
    if not config.data.runs and not config.data.answers:
        probs.add("config", None, "no systems to evaluate", "set data.runs and/or data.answers")
    qrels: Qrels = read_qrels(config.data.qrels, probs) if config.data.qrels else {}
    if config.data.official_leaderboard:
        read_official_leaderboard(config.data.official_leaderboard, probs)
    probs.raise_if_any()
    unknown_q = sorted(set(qrels) - set(queries))
    if unknown_q:
        logger.warning("qrels: %d judged query id(s) not in the queries file are ignored: %s",
                       len(unknown_q), ", ".join(unknown_q[:10]))
    inputs = Inputs(
        queries=pd.DataFrame(sorted(queries.items()), columns=["query_id", "query_text"]),
        rankings=pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "rank", "score", "source"]),
        answer_passages=pd.DataFrame(answer_rows, columns=["query_id", "passage_id", "text"]).drop_duplicates(
            ["query_id", "passage_id"]),
        judgments=pd.DataFrame(
            [(q, d, r) for q in sorted(qrels) if q in queries for d, r in sorted(qrels[q].items())],
            columns=["query_id", "passage_id", "relevance"]),
    )
    logger.info("ingest: %d queries, %d systems, %d ranked passages, %d answer passages, %d judgments",
                len(inputs.queries), inputs.rankings["run"].nunique(), len(inputs.rankings),
                len(inputs.answer_passages), len(inputs.judgments))
    return inputs


def write_inputs(inputs: Inputs, out_dir: str | Path) -> None:
    d = Path(out_dir)
    write_table(d / "queries.parquet", inputs.queries, ["query_id"])
    write_table(d / "rankings.parquet", inputs.rankings, ["run", "query_id", "rank", "passage_id"])
    write_table(d / "answer_passages.parquet", inputs.answer_passages, ["query_id", "passage_id"])
    write_table(d / "judgments.parquet", inputs.judgments, ["query_id", "passage_id"])
