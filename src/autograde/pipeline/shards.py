"""Grading shards: which queries a shard holds, what a shard's grades depend on, and the stale-shard check.

Shards are whole queries dealt round-robin over the sorted query ids, so a shard's content never depends on the
order of the inputs and an edit of one query's test items touches exactly one shard. Snakemake names shards
``"<i>-of-<n>"`` (its scatter items); the shard digest is passed to the grading rule as a ``params`` value, so an
edit reruns exactly the shard it touches.

>>> shard_assignment(["q3", "q1", "q2"], 2)
{'q1': 0, 'q2': 1, 'q3': 0}
>>> parse_scatteritem("2-of-4")
(1, 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograde.core.errors import InvalidValueError
from autograde.core.ids import content_hash

if TYPE_CHECKING:
    from autograde.io.banks.model import BankItem


def shard_assignment(query_ids: list[str], n_shards: int) -> dict[str, int]:
    """Deterministic query -> shard index (0-based): sorted ids dealt round-robin.

    Sorting makes the assignment independent of input order; round-robin balances shard sizes.
    """
    if n_shards < 1:
        raise InvalidValueError(f"number of shards must be >= 1, got {n_shards}")
    return {qid: i % n_shards for i, qid in enumerate(sorted(set(query_ids)))}


def parse_scatteritem(item: str) -> tuple[int, int]:
    """Snakemake's ``"2-of-4"`` -> (index 1, 4 shards)."""
    i, _of, n = item.partition("-of-")
    return int(i) - 1, int(n)


def shard_queries(query_ids: list[str], scatteritem: str) -> list[str]:
    """The sorted query ids of one shard."""
    idx, n = parse_scatteritem(scatteritem)
    return sorted(q for q, s in shard_assignment(query_ids, n).items() if s == idx)


def shard_digest(grader: dict[str, Any], scatteritem: str, queries: dict[str, str],
                 items: dict[str, list[BankItem]]) -> str:
    """Hash of everything a grading shard depends on except the pool: its queries' items and the grader config."""
    mine = shard_queries(list(queries), scatteritem)
    payload = {
        "grader": grader,
        "queries": {q: queries[q] for q in mine},
        "items": {q: [(i.item_id, i.kind, i.text, list(i.gold_answers)) for i in items.get(q, [])] for q in mine},
    }
    return content_hash(payload, 24)
