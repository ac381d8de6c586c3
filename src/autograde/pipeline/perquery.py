"""Digests of each query's rows (rankings, grades, qrels), the keys of the per-query cache; some queries' rankings.

What the analysis stages' per-query values are computed from: a digest of each query's rows, and the rankings of
only the queries a job computes.

The per-query cache (:mod:`autograde.core.querycache`) keys a query's value by these digests. A digest is a
multiset hash of the query's rows: every row of the table (every column except ``query_id``) is hashed by two
independently keyed 64-bit SipHash functions (pandas' ``hash_pandas_object``), each summed modulo 2^64 over the
query's rows, and the two sums and the row count are hashed together (:func:`autograde.core.ids.content_hash`).
So a digest changes with any value of any row, with a row added or removed, and not with the order of the rows.

The rankings table is large (10^6 to 10^7 rows) and the same for every analysis job of a run: its digests are
computed once per rankings content (keyed by the file's sha256) and stored in the cache (``analysis/rankings``);
every later job reads them in a fraction of a second and then reads only the rows of the queries it computes.

>>> import pandas as pd
>>> a = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "passage_id": ["a", "b", "a"], "score": [2.0, 1.0, 2.0]})
>>> d = query_digests(a)
>>> d["q1"] == query_digests(a.iloc[::-1])["q1"], d["q1"] == d["q2"]
(True, False)
>>> query_digests(a.assign(score=[2.0, 1.5, 2.0]))["q2"] == d["q2"]  # q1 changed, q2 did not
True
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.ids import content_hash, file_sha256
from autograde.core.querycache import QueryCache

if TYPE_CHECKING:
    import pandas as pd

    from autograde.io.trec import Qrels

ROW_HASH_KEYS = ("autograde:rows:1", "autograde:rows:2")
"""The two SipHash keys (16 characters each) of :func:`query_digests`."""
DIGEST_VERSION = 1
"""Bumped when :func:`query_digests` changes: stored rankings digests of older code are then not used."""


def query_digests(df: pd.DataFrame, columns: Collection[str] | None = None) -> dict[str, str]:
    """query_id -> digest of that query's rows over ``columns`` (default: every column but ``query_id``)."""
    import numpy as np
    import pandas as pd

    cols = [c for c in (columns if columns is not None else df.columns) if c != "query_id"]
    if df.empty:
        return {}
    codes, queries = pd.factorize(df["query_id"], sort=True)
    order = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]
    counts = np.diff(np.r_[starts, len(order)])
    sums = []
    for key in ROW_HASH_KEYS:
        h = pd.util.hash_pandas_object(df[cols], index=False, hash_key=key).to_numpy(dtype=np.uint64)
        sums.append(np.add.reduceat(h[order], starts))  # uint64: wraps modulo 2^64
    return {str(q): content_hash([DIGEST_VERSION, cols, int(n), int(s1), int(s2)])
            for q, n, s1, s2 in zip(queries, counts, *sums, strict=True)}


def qrels_digests(qrels: Qrels) -> dict[str, str]:
    """query_id -> digest of its judgments (every (doc, grade) of the query)."""
    return {q: content_hash(sorted(docs.items())) for q, docs in qrels.items()}


@dataclass(frozen=True)
class RankingsDigests:
    """Every run of the rankings table and, per query, the digest of all runs' rows for it."""

    runs: list[str]
    queries: dict[str, str]

    def of(self, query: str) -> str:
        """A query's digest (queries no run retrieved anything for have one too: ``-``)."""
        return self.queries.get(query, "-")


def rankings_digests(rankings_path: str | Path, cache_dir: str | Path | None) -> RankingsDigests:
    """The digests of a rankings table (computed once per file content, then read from the cache)."""
    cache = QueryCache(cache_dir, "rankings", DIGEST_VERSION)
    key = cache.key({"sha256": file_sha256(str(rankings_path))})

    def compute(_: list[str]) -> dict[str, Any]:
        from autograde.core.tables import read_table

        df = read_table(rankings_path)
        return {"all": {"runs": sorted(df["run"].unique().tolist()), "queries": query_digests(df)}}

    value = cache.values({"all": key}, compute)["all"]
    return RankingsDigests(list(value["runs"]), dict(value["queries"]))


def read_rankings(rankings_path: str | Path, queries: Collection[str] | None = None,
                  digests: RankingsDigests | None = None) -> pd.DataFrame:
    """The rankings table, or only the rows of ``queries`` (rows in the file's order either way; with the table's
    ``digests``, a list of every query it has reads the whole table without filtering)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from autograde.core.tables import read_table

    if queries is None or (digests is not None and set(digests.queries) <= set(queries)):
        return read_table(rankings_path)
    return pq.read_table(rankings_path, filters=pc.field("query_id").isin(sorted(set(queries)))).to_pandas()
