"""The passage store: a later lookup of the same pool reads the passages it kept instead of the corpus, gives what a
full scan gives, keeps only what was asked for, and a changed corpus file invalidates exactly its own changed passages.

Whether a lookup read lines of the corpus file is seen in the log: every read through the index reports its progress
("reading passages of <file>"), here at every update (a tiny progress interval).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from pathlib import Path

import pytest
from support.corpus_files import jsonl, make_docs, write

from autograde.core.errors import InputError, Problems
from autograde.core.layout import CacheLayout
from autograde.corpus import passage_store
from autograde.corpus.index import open_index
from autograde.corpus.lookup import lookup_corpus
from autograde.corpus.passage_store import PassageStore
from autograde.io.corpus import read_corpus

DOCS = make_docs(4000, seed=11)
POOL = set(list(DOCS)[::9]) | {"not-in-any-file"}


@pytest.fixture(autouse=True)
def _every_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOGRADE_PROGRESS_INTERVAL", "0.000001")


def reads(messages: io.StringIO, path: Path) -> int:
    """How many lookups so far read passages of ``path`` through its index."""
    return sum(1 for ln in messages.getvalue().splitlines() if ln.startswith(f"reading passages of {path}: ")
               and " in " in ln)


def store_of(path: Path, cache: Path) -> PassageStore:
    index = open_index(path, cache, Problems())
    assert index is not None
    return PassageStore(cache, index.manifest)


def stored_ids(store: PassageStore) -> set[str]:
    return set(store.asked())


@pytest.mark.parametrize("name", ["c.jsonl.gz", "c.jsonl", "c.tsv"])
def test_a_second_lookup_of_the_pool_reads_the_store_not_the_corpus(tmp_path: Path, messages: io.StringIO,
                                                                    name: str) -> None:
    text = "".join(f"{k}\t{v}\n" for k, v in DOCS.items()) if name.endswith(".tsv") else jsonl(DOCS)
    path = write(tmp_path / name, text)
    cache = tmp_path / "cache"
    first = lookup_corpus([path], POOL, cache)
    assert first == read_corpus([path], wanted=POOL) and len(first) == len(POOL) - 1
    assert reads(messages, path) == 0  # the first lookup built the index and kept the pool's lines in the same pass
    assert lookup_corpus([path], POOL, cache) == first
    assert reads(messages, path) == 0
    store = store_of(path, cache)
    assert stored_ids(store) == POOL  # only what was asked for (the id in no file is remembered as absent)
    assert (Path(CacheLayout.of(cache).folder("passages")) / store.folder.name).is_dir()
    # a pool that grew by a few passages: only those are read through the index, then kept
    grown = POOL | {"doc-1", "doc-2"}
    assert lookup_corpus([path], grown, cache) == read_corpus([path], wanted=grown)
    assert reads(messages, path) == 1 and stored_ids(store) == grown
    assert lookup_corpus([path], grown, cache) == read_corpus([path], wanted=grown) and reads(messages, path) == 1


def test_ids_of_another_file_are_remembered_as_absent(tmp_path: Path, messages: io.StringIO) -> None:
    items = list(DOCS.items())
    a = write(tmp_path / "a.jsonl.gz", jsonl(dict(items[:2000])))
    b = write(tmp_path / "b.jsonl", jsonl(dict(items[2000:])))
    cache = tmp_path / "cache"
    open_index(a, cache, Problems())  # built before any lookup
    first = lookup_corpus([a, b], POOL, cache)
    assert first == read_corpus([a, b], wanted=POOL) and reads(messages, a) == 1 and reads(messages, b) == 0
    assert lookup_corpus([a, b], POOL, cache) == first
    assert reads(messages, a) == 1 and reads(messages, b) == 0  # half the pool is in each file: none read again


def test_a_changed_file_invalidates_its_changed_passages_only(tmp_path: Path, messages: io.StringIO) -> None:
    items = list(DOCS.items())
    a = write(tmp_path / "a.jsonl.gz", jsonl(dict(items[:2000])))
    b = write(tmp_path / "b.jsonl.gz", jsonl(dict(items[2000:])))
    cache = tmp_path / "cache"
    lookup_corpus([a, b], POOL, cache)
    old_a, store_b = store_of(a, cache), store_of(b, cache)
    segments_b = [(p.name, p.stat().st_mtime_ns) for p in store_b.segments()]
    changed = sorted(POOL & set(list(DOCS)[:2000]))[3]
    edited = {**dict(items[:2000]), changed: "a new text of this passage"}
    write(a, jsonl(edited) + json.dumps({"doc_id": "added", "text": "one more passage"}) + "\n")
    got = lookup_corpus([a, b], POOL | {"added"}, cache)
    assert got == read_corpus([a, b], wanted=POOL | {"added"}) and got[changed] == "a new text of this passage"
    assert "changed since its index was built" in messages.getvalue()
    assert not old_a.folder.exists()  # the store of the old content went with its index
    new_a = store_of(a, cache)
    assert stored_ids(new_a) == POOL | {"added"}  # carried over from the rebuild's own pass, read from the new content
    assert reads(messages, a) == 0 and reads(messages, b) == 0
    # the other file's store is untouched (it only learnt that the new id is not in it)
    assert set(segments_b) < {(p.name, p.stat().st_mtime_ns) for p in store_b.segments()}
    assert lookup_corpus([a, b], POOL, cache) == read_corpus([a, b], wanted=POOL) and reads(messages, a) == 0


def test_a_damaged_segment_is_removed_and_its_passages_looked_up_again(tmp_path: Path, messages: io.StringIO) -> None:
    path = write(tmp_path / "c.jsonl.gz", jsonl(DOCS))
    cache = tmp_path / "cache"
    lookup_corpus([path], POOL, cache)
    (segment,) = store_of(path, cache).segments()
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert lookup_corpus([path], POOL, cache) == read_corpus([path], wanted=POOL)
    assert "is damaged" in messages.getvalue() and reads(messages, path) == 1
    (again,) = store_of(path, cache).segments()  # written anew (the same records: the same content address)
    assert hashlib.sha256(again.read_bytes()).hexdigest()[:32] == again.stem


def test_many_lookups_are_merged_into_one_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passage_store, "MAX_SEGMENTS", 3)
    path = write(tmp_path / "c.jsonl", jsonl(DOCS))
    cache = tmp_path / "cache"
    pools = [set(list(DOCS)[i::50]) for i in range(5)]
    for pool in pools:
        lookup_corpus([path], pool, cache)
    store = store_of(path, cache)
    assert len(store.segments()) <= 3
    every = set().union(*pools)
    assert stored_ids(store) == every
    assert lookup_corpus([path], every, cache) == read_corpus([path], wanted=every)
    rows = sum(len(passage_store.decode_segment(p.read_bytes()) or []) for p in store.segments())
    assert rows == len(every)  # each passage once


def test_problems_read_back_from_the_store_are_those_of_the_full_scan(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    text = ('{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": "  "}\n{"doc_id": "a", "text": "other"}\n'
            '{"doc_id": "c", "text": "fine"}\n')
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode()))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as scan:
        read_corpus([path.name], wanted={"a", "b", "c"})
    for _ in range(2):  # through the index (captured by the build), then from the store
        with pytest.raises(InputError) as looked_up:
            lookup_corpus([path.name], {"a", "b", "c"}, "cache")
        assert [str(p) for p in looked_up.value.problems] == [str(p) for p in scan.value.problems]


def test_a_segment_round_trips_and_anything_else_is_no_segment() -> None:
    rows = [(3, "a", "x é"), (0, "not-here", None), (7, "c", ""), (9, "d\u00fc", "two\nlines")]
    data = passage_store.encode_segment(rows)
    assert passage_store.decode_segment(data) == rows
    for bad in (data[:-3], b"junk", passage_store.MAGIC + zlib.compress(b"\x05" + b"\0" * 7),
                passage_store.MAGIC + b"not zlib"):
        assert passage_store.decode_segment(bad) is None
