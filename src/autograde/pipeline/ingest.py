"""Stage 1, ingest: read and check every input, write the normalized tables.

All problems of all inputs are collected and raised together, before any grading starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.paths import expand_globs
from autograde.core.tables import write_table
from autograde.core.text import load_json_file
from autograde.io.answers import iter_answers
from autograde.io.irds import queries_source
from autograde.io.queries import read_queries
from autograde.io.run_table import read_run_table
from autograde.io.trec import Qrels, read_qrels

if TYPE_CHECKING:
    from autograde.config.model import Config


@dataclass
class Inputs:
    """The checked inputs as tables."""

    queries: pd.DataFrame  # query_id, query_text
    rankings: pd.DataFrame  # run, query_id, passage_id, rank, score, source
    answer_passages: pd.DataFrame  # query_id, passage_id, text
    judgments: pd.DataFrame  # query_id, passage_id, relevance


def read_official_leaderboard(path: str | Path, problems: Problems) -> dict[str, float]:
    """Official leaderboard ``{run: rank}`` (ranks are numbers; ties may share a rank)."""
    data = load_json_file(path, problems, 'write {"run": rank, ...}', "official leaderboard")
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.add(path, None, "expected a JSON object {run_name: rank}", 'write {"run": rank, ...}')
        return {}
    bad = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, int | float) or v != v]
    if bad:
        problems.add(path, None, f"rank of {', '.join(map(repr, bad[:5]))} is not a number",
                     'write {"run": rank, ...} with numeric ranks (1 = best)')
        return {}
    return {str(k): float(v) for k, v in data.items()}


RANKING_COLUMNS = ["run", "query_id", "passage_id", "rank", "score", "source"]


def _run_rows(path: str, queries: dict[str, str], tags_seen: dict[str, str], config: Config,
              probs: Problems) -> pd.DataFrame:
    """The ranked passages of one run file (read in bulk), without run tags another file has and unknown queries."""
    df = read_run_table(path, probs)
    for tag in pd.unique(df["run"]):
        if tag in tags_seen:
            probs.add(path, None, f"run tag {tag!r} also appears in {tags_seen[tag]}", "give every run a unique tag")
        else:
            tags_seen[tag] = path
    df = df[df["run"].isin([t for t, p in tags_seen.items() if p == path])]
    if queries and len(df):
        unknown = ~df["query_id"].isin(list(queries))
        if unknown.any():
            first = df[unknown].groupby(["run", "query_id"], sort=False)["line"].min().sort_values()
            for (_tag, qid), n in first.items():
                probs.add(path, int(n), f"query id {qid!r} is not in {queries_source(config)}",
                          "fix the query id or add the query to the queries file")
            df = df[~unknown]
    return df.assign(source="run")[RANKING_COLUMNS]


def _concat_rankings(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "rank" else "float64" if c == "score" else "str")
                             for c in RANKING_COLUMNS})
    return pd.concat(frames, ignore_index=True)


def ingest(config: Config, problems: Problems | None = None) -> Inputs:
    """Read queries, runs, answers and qrels; raise one InputError listing every problem.

    With a ``problems`` collector, problems are added to it instead and the (partial) inputs are returned; the
    caller raises. Banks are checked separately (:func:`autograde.io.banks.read.read_banks`, at workflow parse time),
    so that a bank edit never reruns ingest and the pool.
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    queries = read_queries(config.data.queries_file, probs)
    tags_seen: dict[str, str] = {}
    frames = [_run_rows(path, queries, tags_seen, config, probs) for path in expand_globs(config.data.runs)]
    answer_cols: dict[str, list] = {c: [] for c in ("run", "query_id", "passage_id", "rank", "text")}
    for path in expand_globs(config.data.answers):
        for ap in iter_answers(path, config.answers.max_words, probs):
            if ap.run in tags_seen and tags_seen[ap.run] != path:
                probs.add(path, None, f"answer run {ap.run!r} also appears in {tags_seen[ap.run]}",
                          "give every system a unique name")
                continue
            tags_seen.setdefault(ap.run, path)
            if queries and ap.query_id not in queries:
                probs.add(path, None, f"query id {ap.query_id!r} of run {ap.run!r} is not in {queries_source(config)}",
                          "fix the query id or add the query")
                continue
            for c, v in zip(answer_cols, (ap.run, ap.query_id, ap.passage_id, ap.rank, ap.text), strict=True):
                answer_cols[c].append(v)
    answers = pd.DataFrame(answer_cols).astype({"run": "str", "query_id": "str", "passage_id": "str", "rank": "int64",
                                                "text": "str"})
    if len(answers):
        frames.append(answers.assign(score=-answers["rank"].astype("float64"), source="answer")[RANKING_COLUMNS])
    if not config.data.runs and not config.data.answers:
        probs.add("config", None, "no systems to evaluate", "set data.runs and/or data.answers")
    qrels: Qrels = read_qrels(config.data.qrels, probs) if config.data.qrels else {}
    if config.data.official_leaderboard:  # its systems are checked against ours by autograde.workflow.checks
        read_official_leaderboard(config.data.official_leaderboard, probs)
    if own:
        probs.raise_if_any()
    unknown_q = sorted(set(qrels) - set(queries))
    if unknown_q:
        logger.warning("qrels: %d judged query id(s) not in the queries file are ignored: %s",
                       len(unknown_q), ", ".join(unknown_q[:10]))
    inputs = Inputs(
        queries=pd.DataFrame(sorted(queries.items()), columns=["query_id", "query_text"]),
        rankings=_concat_rankings(frames),
        answer_passages=answers[["query_id", "passage_id", "text"]].drop_duplicates(
            ["query_id", "passage_id"]).reset_index(drop=True),
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
