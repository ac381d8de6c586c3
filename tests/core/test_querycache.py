"""The per-query cache: stored values read back exactly, and an entry that is truncated, edited or names another key
is counted as corrupt and computed again (never served)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from autograde.core.querycache import QueryCache, describe, merge_stats


def _values(cache: QueryCache, keys: dict[str, str], calls: list[list[str]]) -> dict:
    def compute(queries: list[str]) -> dict:
        calls.append(list(queries))
        return {q: {"v": 0.1 + len(q) / 3, "n": len(q), "nan": math.nan, "text": f"é {q}"} for q in queries}

    return cache.values(keys, compute)


def test_values_round_trip_and_only_misses_are_computed(tmp_path: Path) -> None:
    cache = QueryCache(tmp_path, "stage", 1)
    keys = {q: cache.key({"q": q}) for q in ("q1", "q22", "q333")}
    calls: list[list[str]] = []
    first = _values(cache, keys, calls)
    again = _values(QueryCache(tmp_path, "stage", 1), keys, calls)
    assert calls == [["q1", "q22", "q333"]]  # the second call computed nothing
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)  # floats exact, NaN kept
    assert list(again) == ["q1", "q22", "q333"] and again["q22"]["v"] == 0.1 + 3 / 3
    assert cache.stats == {"queries": 3, "cached": 0, "computed": 3, "corrupt": 0}
    assert QueryCache(tmp_path, "stage", 2).key({"q": "q1"}) != keys["q1"]  # a new version: other keys
    assert QueryCache(tmp_path, "other", 1).key({"q": "q1"}) != keys["q1"]


@pytest.mark.parametrize("damage", ["truncated", "edited", "other key", "empty", "not json"])
def test_a_damaged_entry_is_recomputed_not_served(tmp_path: Path, damage: str) -> None:
    cache = QueryCache(tmp_path, "stage", 1)
    keys = {"q1": cache.key("q1"), "q2": cache.key("q2")}
    good = _values(cache, keys, [])
    path = next(p for p in (tmp_path / "analysis" / "stage").rglob("*.json") if keys["q1"] in p.name)
    text = path.read_text(encoding="utf-8")
    path.write_text({"truncated": text[: len(text) // 2], "edited": text.replace('"n":2', '"n":3'),
                     "other key": text.replace(keys["q1"], keys["q2"]), "empty": "",
                     "not json": "\x00\x01"}[damage], encoding="utf-8")
    calls: list[list[str]] = []
    fresh = QueryCache(tmp_path, "stage", 1)
    again = _values(fresh, keys, calls)
    assert calls == [["q1"]]
    assert json.dumps(again, sort_keys=True) == json.dumps(good, sort_keys=True)
    assert fresh.stats == {"queries": 2, "cached": 1, "computed": 1, "corrupt": 1}
    assert "1 unreadable entries recomputed" in describe(fresh.stats)
    assert _values(QueryCache(tmp_path, "stage", 1), keys, calls) and calls == [["q1"]]  # rewritten: read back now


def test_no_cache_folder_computes_everything(tmp_path: Path) -> None:
    cache = QueryCache(None, "stage", 1)
    calls: list[list[str]] = []
    _values(cache, {"q": cache.key(1)}, calls)
    _values(cache, {"q": cache.key(1)}, calls)
    assert calls == [["q"], ["q"]] and merge_stats([cache.stats, cache.stats])["computed"] == 4
