"""The corpus index gives what a full scan gives: the same texts, the same problems, for JSONL, JSONL.gz and TSV.

Every case is checked against :func:`autograde.io.corpus.read_corpus` (the full scan the index replaces), also
with chunks of a few hundred bytes so that records fall on chunk and page boundaries (gzip checkpoints:
test_gzip.py; damaged and stale indexes: test_stale.py).
"""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import pytest
from support.corpus_files import jsonl, make_docs, tsv, write

from autograde.core.errors import InputError, Problems
from autograde.corpus.index import open_index
from autograde.corpus.lookup import lookup_corpus
from autograde.io.corpus import read_corpus

DOCS = make_docs(3000)
rng = random.Random(7)
WANTED = set(rng.sample(sorted(DOCS), 500)) | {"missing-1", "missing-2"}


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz", "c.tsv", "c.tsv.gz"])
@pytest.mark.parametrize("chunk", [None, 700])
def test_lookup_equals_the_full_scan(tmp_path: Path, name: str, chunk: int | None) -> None:
    docs = dict(list(DOCS.items())[:800]) if chunk else DOCS  # small chunks: fewer passages keep the test fast
    text = "\ufeff" + (tsv(docs) if ".tsv" in name else jsonl(docs)) + "\n  \n"  # BOM, blank lines
    path = write(tmp_path / name, text)
    cache = tmp_path / "cache"
    if chunk:
        assert open_index(path, cache, Problems(), chunk_bytes=chunk) is not None
    got = lookup_corpus([path], WANTED, cache)
    assert got == read_corpus([path], wanted=WANTED) and len(got) == len(WANTED & set(docs)) > 100
    assert lookup_corpus([path], WANTED, cache) == got  # the second time, from the existing index


def test_numeric_ids_and_ids_with_blanks(tmp_path: Path) -> None:
    j = write(tmp_path / "n.jsonl", '{"pid": 17, "text": "seventeen"}\n{"pid": 18, "text": "eighteen"}\n')
    t = write(tmp_path / "b.tsv", " padded \tpadded id\nplain\tplain id\n")
    wanted = {"17", "padded", "plain"}
    assert lookup_corpus([j, t], wanted, tmp_path / "cache") == read_corpus([j, t], wanted=wanted) == {
        "17": "seventeen", "padded": "padded id", "plain": "plain id"}


BAD = [
    ("c.jsonl", '{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": 5}\n', "c.jsonl:2: 'doc_id' must be a string"),
    ("c.jsonl", '{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "txt": "y"}\n', "c.jsonl:2: missing id or text key"),
    ("c.jsonl", '{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": "y"\n', "c.jsonl:2: not valid JSON"),
    ("c.jsonl", '{"doc_id": "a", "text": "x", "text": "y"}\n', "c.jsonl:1: key 'text' appears twice"),
    ("c.jsonl", '[1, 2]\n', "c.jsonl:1: expected a JSON object, got list"),
    ("c.tsv", "a\tx\nb without a tab\n", "c.tsv:2: expected 'doc_id<TAB>text'"),
    ("c.jsonl", '{"doc_id": "a", "text": "x"}\n{"doc_id": "a", "text": "other"}\n',
     "c.jsonl:2: document 'a' appears twice with different text"),
    ("c.jsonl", '{"doc_id": "a", "text": "  "}\n', "c.jsonl:1: document 'a' has empty text"),
]


@pytest.mark.parametrize(("name", "text", "expected"), BAD, ids=[b[2] for b in BAD])
def test_problems_are_those_of_the_full_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str,
                                            expected: str) -> None:
    write(tmp_path / name, text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as scan:
        read_corpus([name], wanted={"a", "b"})
    with pytest.raises(InputError) as looked_up:
        lookup_corpus([name], {"a", "b"}, "cache")
    assert [str(p) for p in looked_up.value.problems] == [str(p) for p in scan.value.problems]
    assert expected in str(looked_up.value)


def test_bad_utf8_and_truncated_gzip(tmp_path: Path) -> None:
    bad = tmp_path / "u.jsonl"
    bad.write_bytes(b'{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": "\xff"}\n')
    with pytest.raises(InputError, match=r"u.jsonl:2: not valid UTF-8"):
        lookup_corpus([bad], {"a"}, tmp_path / "cache")
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(jsonl(DOCS).encode())[:-100])
    with pytest.raises(InputError, match="the gzip file is truncated"):
        lookup_corpus([gz], {"doc-1"}, tmp_path / "cache")
    assert not list((tmp_path / "cache" / "corpus-index").glob("[!.]*"))  # nothing half-built is kept


def test_a_changed_corpus_file_is_reindexed_and_says_so(tmp_path: Path, messages: io.StringIO) -> None:
    path = write(tmp_path / "c.jsonl", jsonl(DOCS))
    cache = tmp_path / "cache"
    assert lookup_corpus([path], {"doc-1"}, cache) == {"doc-1": DOCS["doc-1"]}
    assert "building its passage index" in messages.getvalue()
    first = {p.name for p in (cache / "corpus-index").glob("[!.]*")}
    write(path, jsonl({**DOCS, "doc-1": "a new text"}))
    assert lookup_corpus([path], {"doc-1"}, cache) == {"doc-1": "a new text"}
    assert "changed since its index was built" in messages.getvalue()
    second = {p.name for p in (cache / "corpus-index").glob("[!.]*")}
    assert len(second) == 1 and second != first  # the stale index is gone


def test_index_is_content_addressed_and_reused(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl.gz", jsonl(DOCS))
    probs = Problems()
    a = open_index(path, tmp_path / "cache", probs)
    b = open_index(path, tmp_path / "cache", probs)
    assert a is not None and b is not None and a.folder == b.folder and a.compressed and not probs
    assert a.manifest["entries"] == len(DOCS) and a.manifest["source"]["path"] == str(path.resolve())
    assert {p.name for p in a.folder.iterdir()} == {"manifest.json", "entries.bin", "entries.crc", "fences.u8",
                                                    "lines.u8", "checkpoints.gzi"}
    entries = (a.folder / "entries.bin").stat().st_size
    assert entries == 16 * len(DOCS)  # 16 bytes per passage; no copy of the corpus
    assert sum(f.stat().st_size for f in a.folder.iterdir()) < entries + path.stat().st_size * 0.05
