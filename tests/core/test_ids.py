"""Item ids reproduce the workbench's: all 540 questions and 540 nuggets of the DL20 banks."""

from __future__ import annotations

import gzip
import json

import pytest
from support.helpers import shared_data

from autograde.core.ids import content_hash, item_id
from autograde.io.banks.read import read_bank
from autograde.pipeline.shards import shard_assignment


@pytest.mark.parametrize(("name", "id_key", "text_key"), [
    ("dl20-questions.jsonl.gz", "question_id", "question_text"),
    ("dl20-nuggets.jsonl.gz", "nugget_id", "nugget_text"),
])
def test_dl20_bank_ids_round_trip(name: str, id_key: str, text_key: str) -> None:
    path = shared_data("dl20", name)
    expected = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            expected += [(it[id_key], item_id(rec["query_id"], it[text_key])) for it in rec["items"]]
    assert len(expected) == 540
    assert all(given == ours for given, ours in expected)
    bank = read_bank(path)  # the reader computes the same ids from the texts
    assert sorted(i.item_id for i in bank.items) == sorted(g for g, _ in expected)


def test_item_id_strips_and_facets() -> None:
    assert item_id("q1", "  What?  ") == item_id("q1", "What?")
    assert item_id("q1", "What?", facet_id="f2").startswith("q1/f2/")


def test_content_hash_is_canonical() -> None:
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})


def test_shard_assignment_is_balanced_and_order_free() -> None:
    qids = [f"q{i}" for i in range(10)]
    a = shard_assignment(qids, 4)
    assert a == shard_assignment(list(reversed(qids)), 4)
    sizes = [list(a.values()).count(s) for s in range(4)]
    assert max(sizes) - min(sizes) <= 1
    with pytest.raises(ValueError):
        shard_assignment(qids, 0)
