"""The per-query cache of the analysis stages: each query's values, stored under a key of what they come from.

What a stage computed for one query is stored under a key of everything that determines it, so a rerun computes
only the queries whose inputs changed.

An analysis stage (evaluation, cover, the bank impact of the grader reports, the site's query pages) splits its
work by query. For each query it builds the key from that query's inputs (its qrels or grade rows, every run's
rows for it, the settings, the version of the computation), takes the stored value where there is one and
computes only the other queries, in one batch. What a stage writes is then built from the per-query values
exactly as a full computation builds it, so a full run and a rerun give the same bytes: a value goes through
JSON whether it was computed now or read back (JSON keeps every float exactly), and the stage only ever sees
the read-back form. The correlation report uses the same cache with one entry per leaderboard instead of per query
(its bootstrap resamples queries, so a leaderboard is its unit of work).

Each entry is one file ``<cache_dir>/analysis/<stage>/<key[:2]>/<key>.json`` (written atomically) holding the
key, a checksum of the value and the value. A file that does not parse, names another key or fails its checksum
(truncated, edited, half-written by a killed job) is counted as ``corrupt``, and its query is computed again and
the entry rewritten. Keys are sha256 content hashes (:func:`autograde.core.ids.content_hash`) of the inputs and
the stage's version: a stage bumps its version when what it computes changes, so an entry can never serve a
value of older code.

>>> import tempfile
>>> cache = QueryCache(tempfile.mkdtemp(), "example", version=1)
>>> keys = {"q1": cache.key({"rows": [1, 2]}), "q2": cache.key({"rows": [3]})}
>>> cache.values(keys, lambda qs: {q: {"sum": len(q)} for q in qs})
{'q1': {'sum': 2}, 'q2': {'sum': 2}}
>>> cache.values(keys, lambda qs: {q: {"sum": 0} for q in qs})  # both stored: nothing computed
{'q1': {'sum': 2}, 'q2': {'sum': 2}}
>>> cache.stats
{'queries': 4, 'cached': 2, 'computed': 2, 'corrupt': 0}
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from autograde.core.ids import content_hash
from autograde.core.layout import CacheLayout
from autograde.core.text import atomic_write_text

__all__ = ["QueryCache", "QueryStats", "describe", "merge_stats"]

QueryStats = dict[str, int]
"""Counts of one stage's queries: ``queries``, ``cached``, ``computed``, ``corrupt`` (entries found unreadable)."""


def _dumps(value: Any) -> str:
    """The stored form of a value: strict JSON (a value JSON cannot hold is a programming error, never a string)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _check(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class QueryCache:
    """The stored per-query values of one analysis stage (``cache_dir`` None: nothing stored, all computed)."""

    def __init__(self, cache_dir: str | Path | None, stage: str, version: int | str) -> None:
        self.stage = stage
        self.version = str(version)
        self.folder = Path(CacheLayout.of(cache_dir).analysis(stage)) if cache_dir is not None else None
        self.stats: QueryStats = {"queries": 0, "cached": 0, "computed": 0, "corrupt": 0}

    def key(self, inputs: Any) -> str:
        """The key of one query's value: a hash of everything it is computed from (and the stage and version)."""
        return content_hash({"stage": self.stage, "version": self.version, "inputs": inputs}, length=40)

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[bool, Any]:
        """(found, value) of one key; an unreadable entry counts as corrupt and is not found."""
        if self.folder is None:
            return False, None
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False, None
        except (OSError, UnicodeDecodeError):
            self.stats["corrupt"] += 1
            return False, None
        try:
            entry = json.loads(text)
            ok = (isinstance(entry, dict) and entry.get("key") == key and "value" in entry
                  and entry.get("check") == _check(_dumps(entry["value"])))
        except (ValueError, TypeError, RecursionError):
            ok = False
        if not ok:
            self.stats["corrupt"] += 1
            return False, None
        return True, entry["value"]

    def put(self, key: str, value: Any) -> Any:
        """Store one value; returns its read-back form (what :meth:`get` will return for it)."""
        text = _dumps(value)
        if self.folder is not None:
            atomic_write_text(self._path(key), _dumps({"key": key, "check": _check(text), "value": json.loads(text)})
                              + "\n")
        return json.loads(text)

    def values(self, keys: Mapping[str, str], compute: Callable[[list[str]], Mapping[str, Any]]) -> dict[str, Any]:
        """The value of every query of ``keys`` (query -> key): stored ones read back, the others computed by ONE
        call ``compute(queries)`` (which must return a value for each) and stored. Order of ``keys`` kept."""
        found: dict[str, Any] = {}
        missing: list[str] = []
        for q, k in keys.items():
            hit, value = self.get(k)
            if hit:
                found[q] = value
            else:
                missing.append(q)
        if missing:
            computed = compute(missing)
            for q in missing:
                found[q] = self.put(keys[q], computed[q])
        self.stats["queries"] += len(keys)
        self.stats["cached"] += len(keys) - len(missing)
        self.stats["computed"] += len(missing)
        return {q: found[q] for q in keys}


def describe(stats: QueryStats) -> str:
    """One log line: how many queries were computed and how many read back."""
    return (f"{stats['queries']} queries, {stats['computed']} computed, {stats['cached']} from the cache"
            + (f" ({stats['corrupt']} unreadable entries recomputed)" if stats.get("corrupt") else ""))


def merge_stats(stats: Iterable[QueryStats]) -> QueryStats:
    """The sum of several caches' counts (one job that uses more than one)."""
    out: QueryStats = {"queries": 0, "cached": 0, "computed": 0, "corrupt": 0}
    for s in stats:
        for k in out:
            out[k] += int(s.get(k, 0))
    return out
