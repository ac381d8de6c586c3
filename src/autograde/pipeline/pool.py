"""Stage 2, pool: judged passages plus the top-k of every system, ONE row per distinct passage per query."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.tables import write_table
from autograde.corpus.passages import lookup_passages, passage_source
from autograde.io.trec import trec_ranked
from autograde.pipeline.shards import shard_assignment

if TYPE_CHECKING:
    from autograde.config.model import Config

POOL_COLUMNS = ["query_id", "passage_id", "text", "judged", "n_systems"]


def pool_counts(config: Config, rankings: pd.DataFrame, judgments: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(keys, counts) of the pool before its texts are looked up: the (query_id, passage_id) of every passage in
    some system's top ``pool.depth`` (trec_eval order) and, with ``pool.include_judged``, every judged passage; and
    per ranked passage the number of systems that rank it that high (``n_systems``). A passage without text is
    left out of the pool later (or is an error), per ``pool.missing_text``."""
    top = trec_ranked(rankings)
    top = top[top["trec_rank"] <= config.pool.depth]
    counts = top.groupby(["query_id", "passage_id"]).size().rename("n_systems").reset_index()
    keys = counts[["query_id", "passage_id"]]
    if config.pool.include_judged and len(judgments):
        keys = pd.concat([keys, judgments[["query_id", "passage_id"]]]).drop_duplicates()
    return keys, counts


def build_pool(config: Config, rankings: pd.DataFrame, judgments: pd.DataFrame,
               answer_passages: pd.DataFrame, download: bool = True) -> pd.DataFrame:
    """The pool; doc ids without text are an error (or skipped, per ``pool.missing_text``).

    Passage texts are looked up by id (:func:`autograde.corpus.passages.lookup_passages`); ``download=False``
    refuses to let ir_datasets download a dataset's documents (``autograde validate``).
    """
    depth = config.pool.depth
    keys, counts = pool_counts(config, rankings, judgments)
    judged = set(zip(judgments["query_id"], judgments["passage_id"], strict=True))
    answer_text = {(q, p): t for q, p, t in answer_passages[["query_id", "passage_id", "text"]].itertuples(index=False)}
    need_docs = {p for q, p in keys.itertuples(index=False) if (q, p) not in answer_text}
    probs = Problems()
    corpus = lookup_passages(config, need_docs, probs, download) if need_docs else {}
    probs.raise_if_any()
    rows = []
    missing_run: list[tuple[str, str]] = []
    missing_judged = 0
    in_runs = set(zip(counts["query_id"], counts["passage_id"], strict=True))
    for q, p in keys.itertuples(index=False):
        text = answer_text.get((q, p)) or corpus.get(p)
        if text is None:
            if (q, p) in in_runs:
                missing_run.append((q, p))
            else:
                missing_judged += 1
            continue
        rows.append((q, p, text, (q, p) in judged))
    if missing_judged:
        logger.warning("pool: %d judged passage(s) have no text in the corpus and are not graded", missing_judged)
    if missing_run:
        sample = ", ".join(f"{q}/{p}" for q, p in missing_run[:10])
        if config.pool.missing_text == "error":
            probs.add(passage_source(config), None,
                      f"{len(missing_run)} passage(s) in the top-{depth} of the runs have no text, e.g. {sample}",
                      "add them to the corpus, or set pool.missing_text: skip")
            probs.raise_if_any()
        logger.warning("pool: skipped %d run passage(s) without text, e.g. %s", len(missing_run), sample)
    pool = pd.DataFrame(rows, columns=["query_id", "passage_id", "text", "judged"])
    pool = pool.merge(counts, on=["query_id", "passage_id"], how="left")
    pool["n_systems"] = pool["n_systems"].fillna(0).astype("int64")
    logger.info("pool: %d passages over %d queries (depth %d)", len(pool), pool["query_id"].nunique(), depth)
    return pool[POOL_COLUMNS]


def write_pool_shards(pool: pd.DataFrame, query_ids: list[str], shard_paths: Sequence[str | Path]) -> None:
    """Split the pool by query into the given shard files (query -> shard by :func:`shard_assignment`)."""
    assign = shard_assignment(query_ids, len(shard_paths))
    shard_of = pool["query_id"].map(assign)
    for i, path in enumerate(shard_paths):
        write_table(path, pool[shard_of == i], ["query_id", "passage_id"])


def write_pool(pool: pd.DataFrame, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_table(path, pool, ["query_id", "passage_id"])
