"""The corpus index gives what a full scan gives: the same texts, the same problems, for JSONL, JSONL.gz and TSV.

Every case is checked against :func:`autograde.io.corpus.read_corpus` (the full scan the index replaces), also
with chunks of a few hundred bytes so that records fall on chunk and LZ4 block boundaries.
"""

from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path

import pytest

from autograde.core.errors import InputError, Problems
from autograde.corpus.index import build_index, fingerprint, index_folder, open_index
from autograde.corpus.lookup import lookup_corpus
from autograde.io.corpus import read_corpus

rng = random.Random(7)
DOCS = {f"doc-{i}": " ".join(rng.choice(["bee", "honey", "tide", "moon", "bread", "é", "ü"]) for _ in range(rng.randint(1, 60)))
        for i in range(3000)}


def write(path: Path, text: str) -> Path:
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def jsonl(docs: dict[str, str]) -> str:
    lines = []
    for i, (k, v) in enumerate(docs.items()):
        key = ("doc_id", "docid", "id", "_id", "pid")[i % 5]
        rec = {key: k, "text": v} if i % 7 else {"title": f"T{i}", key: k, "contents": v, "url": [1, {"a": 2}]}
        lines.append(json.dumps(rec, ensure_ascii=i % 2 == 0))
    return "\n".join(lines) + "\n"


def tsv(docs: dict[str, str]) -> str:
    return "".join(f"{k}\t{v}\r\n" if i % 3 == 0 else f"{k}\t{v}\n" for i, (k, v) in enumerate(docs.items()))


WANTED = set(rng.sample(sorted(DOCS), 500)) | {"missing-1", "missing-2"}


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz", "c.tsv", "c.tsv.gz"])
@pytest.mark.parametrize("chunk", [None, 700])
def test_lookup_equals_the_full_scan(tmp_path: Path, name: str, chunk: int | None) -> None:
    text = "\ufeff" + (tsv(DOCS) if ".tsv" in name else jsonl(DOCS)) + "\n  \n"  # BOM, blank lines
    path = write(tmp_path / name, text)
    cache = tmp_path / "cache"
    if chunk:
        fp = fingerprint(path)
        assert build_index(str(path), fp, index_folder(cache, fp), Problems(), chunk_bytes=chunk)
    got = lookup_corpus([path], WANTED, cache)
    assert got == read_corpus([path], wanted=WANTED) and len(got) == 500
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
    first = {p.name for p in (cache / "corpus-index").iterdir()}
    write(path, jsonl({**DOCS, "doc-1": "a new text"}))
    assert lookup_corpus([path], {"doc-1"}, cache) == {"doc-1": "a new text"}
    assert "changed since its index was built" in messages.getvalue()
    second = {p.name for p in (cache / "corpus-index").iterdir()}
    assert len(second) == 1 and second != first  # the stale index is gone


def test_index_is_content_addressed_and_reused(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl.gz", jsonl(DOCS))
    probs = Problems()
    a = open_index(path, tmp_path / "cache", probs)
    b = open_index(path, tmp_path / "cache", probs)
    assert a is not None and b is not None and a.folder == b.folder and a.compressed and not probs
    assert a.manifest["entries"] == len(DOCS) and a.manifest["fingerprint"]["path"] == str(path.resolve())
    assert {p.name for p in a.folder.iterdir()} == {"manifest.json", "entries.bin", "fences.npy", "blocks.lz4",
                                                    "blocks.u8"}


def test_a_long_build_and_lookup_report_their_progress_in_the_log(tmp_path: Path, messages: io.StringIO,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress lines (here at every update: a tiny interval) say how many MB of the corpus are indexed of how
    many, and how many passages are read; a last line each."""
    monkeypatch.setenv("AUTOGRADE_PROGRESS_INTERVAL", "0.000001")
    docs = {f"d{i}": "honey moon tide " * 10 for i in range(15000)}  # about 2.6 MB
    path = write(tmp_path / "big.jsonl", jsonl(docs))
    fp = fingerprint(path)
    assert build_index(str(path), fp, index_folder(tmp_path / "cache", fp), Problems(), chunk_bytes=256 * 1024)
    lines = messages.getvalue().splitlines()
    indexing = [ln for ln in lines if ln.startswith(f"indexing corpus {path}: ")]
    assert len(indexing) >= 2 and "/2 MB (" in indexing[0] and " left" in indexing[0]
    assert " MB in " in indexing[-1]  # the last line: how long the whole build took
    assert len(lookup_corpus([path], {"d1", "d2", "d14999"}, tmp_path / "cache")) == 3
    assert any(ln.startswith(f"reading passages of {path}: 3/3 passages in ") for ln in messages.getvalue().splitlines())
