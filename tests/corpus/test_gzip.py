"""Random access into a ``.gz`` corpus through its checkpoints: every id gives the full scan's text, byte for byte,
in a single-member and a multi-member file, including passages that span a checkpoint or a member boundary; and no
copy of the corpus is written."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from support.corpus_files import jsonl, make_docs, write

from autograde.core.errors import Problems
from autograde.corpus.index import open_index
from autograde.corpus.lookup import lookup_corpus
from autograde.corpus.source import gzip_checkpoints
from autograde.io.corpus import read_corpus

DOCS = make_docs(8000, seed=11)
TEXT = "\ufeff" + jsonl(DOCS)


@pytest.mark.parametrize("members", [1, 5])
def test_every_id_is_the_full_scans_text_across_checkpoints(tmp_path: Path, members: int) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT, members)
    data = TEXT.encode("utf-8")
    index = open_index(path, tmp_path / "cache", Problems())
    assert index is not None and index.compressed
    points = gzip_checkpoints(index.folder, str(path))
    inside = [c for c in points if 0 < c < len(data) and data[c - 1:c] != b"\n"]  # cut through a passage's line
    assert len(inside) >= 2, points
    starts = [len(data) * i // members for i in range(1, members)]
    assert members == 1 or any(data[s - 1:s] != b"\n" for s in starts)  # member boundaries cut lines too
    got = lookup_corpus([path], set(DOCS), tmp_path / "cache")
    assert got == read_corpus([path], wanted=set(DOCS)) and got == {k: v for k, v in DOCS.items()} | {
        k: f"T{i}\n{DOCS[k]}" for i, k in enumerate(DOCS) if i % 7 == 0}
    assert [p.name for p in index.folder.iterdir() if p.stat().st_size > path.stat().st_size / 2] == []


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz"])
def test_lines_longer_than_a_stored_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Lengths are stored in 24 bits, saturated: a line of 16 MiB or more is read on to its newline (shown here with
    the saturation at 255 bytes, which many lines exceed)."""
    from autograde.corpus import build, lookup

    monkeypatch.setattr(build, "LONG_LINE", 255)
    monkeypatch.setattr(lookup, "LONG_LINE", 255)
    docs = make_docs(600, seed=3)
    path = write(tmp_path / name, jsonl(docs))
    assert sum(len(line) > 255 for line in jsonl(docs).splitlines()) > 50
    got = lookup_corpus([path], set(docs), tmp_path / "cache")
    assert got == read_corpus([path], wanted=set(docs)) and len(got) == 600


def test_an_empty_gz_file_has_no_passages(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl.gz"
    path.write_bytes(gzip.compress(b""))
    assert lookup_corpus([path], {"a"}, tmp_path / "cache") == {}
    path.write_bytes(b"")
    assert lookup_corpus([path], {"a"}, tmp_path / "cache") == {}
