"""The pool as the estimates see it: its units (query, passage) in a fixed order, and every system's ranking of each
query restricted to them, in trec_eval's order (:class:`autograde.ppi.measures.RankedPool`).

>>> import pandas as pd
>>> keys = [("q1", "a"), ("q1", "b"), ("q2", "c")]
>>> runs = pd.DataFrame({"run": ["r", "r", "r"], "query_id": ["q1", "q1", "q2"], "passage_id": ["x", "b", "c"],
...                      "score": [3.0, 2.0, 1.0]})
>>> rp = ranked_pool(runs, keys)
>>> rp.pos[0].tolist(), rp.rank[0].tolist()
([[1], [2]], [[2], [1]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from autograde.core.ids import PairKey
from autograde.io.trec import trec_ranked
from autograde.metrics.trec import query_sort_key
from autograde.ppi.measures import RankedPool


def pool_order(keys: Sequence[PairKey]) -> list[PairKey]:
    """The units of a pool in the one order every file and array uses: by query (numeric ids numerically), then
    passage id."""
    return sorted(set(keys), key=lambda k: (query_sort_key(k[0]), k[1]))


def ranked_pool(rankings: pd.DataFrame, keys: Sequence[PairKey], missing_queries: str = "zero",
                systems: Sequence[str] | None = None) -> RankedPool:
    """Every system's ranking (``rankings``: run, query_id, passage_id, score) restricted to the pool units ``keys``
    (in this order). ``missing_queries`` ``zero``: every pool query counts in every system's mean (trec_eval -c);
    ``skip``: only the queries a system ranked."""
    queries = sorted({q for q, _ in keys}, key=query_sort_key)
    qindex = {q: i for i, q in enumerate(queries)}
    unit = pd.DataFrame({"query_id": [q for q, _ in keys], "passage_id": [p for _, p in keys],
                         "unit": np.arange(len(keys))})
    systems = sorted(set(rankings["run"].unique())) if systems is None else list(systems)
    sindex = {s: i for i, s in enumerate(systems)}
    r = rankings[rankings["run"].isin(sindex) & rankings["query_id"].isin(qindex)]
    ranked = trec_ranked(r[["run", "query_id", "passage_id", "score"]])
    hit = ranked.merge(unit, on=["query_id", "passage_id"], how="inner")
    hit = hit.sort_values(["run", "query_id", "trec_rank"], kind="mergesort")
    hit["slot"] = hit.groupby(["run", "query_id"]).cumcount()
    depth = int(hit["slot"].max()) + 1 if len(hit) else 1
    pos = np.full((len(systems), len(queries), depth), -1, dtype=np.int64)
    rank = np.zeros((len(systems), len(queries), depth), dtype=np.int64)
    s = hit["run"].map(sindex).to_numpy()
    q = hit["query_id"].map(qindex).to_numpy()
    sl = hit["slot"].to_numpy()
    pos[s, q, sl] = hit["unit"].to_numpy()
    rank[s, q, sl] = hit["trec_rank"].to_numpy()
    if missing_queries == "zero":
        evaluated = np.ones((len(systems), len(queries)), dtype=bool)
    else:
        evaluated = np.zeros((len(systems), len(queries)), dtype=bool)
        seen = r[["run", "query_id"]].drop_duplicates()
        evaluated[seen["run"].map(sindex).to_numpy(), seen["query_id"].map(qindex).to_numpy()] = True
    query_of = np.array([qindex[k[0]] for k in keys], dtype=np.int64)
    return RankedPool(systems, queries, query_of, pos, rank, evaluated)
