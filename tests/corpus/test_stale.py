"""A corrupted or stale corpus index is never used: a corpus changed in place (same size, same modification time,
the sampled bytes untouched), a damaged, truncated or missing index file, a forged manifest, a line that is not its
entry's, a truncated or replaced ``.gz``, and a build killed half-way (its temporary folder is removed by the next
open). Each case ends with the texts of a full scan."""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.corpus_files import jsonl, make_docs, write

from autograde.core.errors import InputError, Problems
from autograde.corpus import source
from autograde.corpus.index import open_index, sweep
from autograde.corpus.lookup import lookup_corpus
from autograde.corpus.source import fingerprint
from autograde.corpus.store import CorpusIndex, write_manifest
from autograde.io.corpus import read_corpus

DOCS = make_docs(6000, seed=5)
TEXT = jsonl(DOCS)
WANTED = set(list(DOCS)[::40])


def _gz_with_a_stored_middle(text: str) -> bytes:
    """A three-member gzip file whose middle member is stored uncompressed: a same-length edit there keeps the size."""
    data = text.encode("utf-8")
    a, b = len(data) * 3 // 10, len(data) * 7 // 10
    return b"".join(gzip.compress(part, level, mtime=0) for part, level in ((data[:a], 1), (data[a:b], 0), (data[b:], 1)))


def _plain(text: str) -> bytes:
    return text.encode("utf-8")


def _change_in_place(path: Path, make: Callable[[str], bytes], edit: Callable[[str], str | None]) -> str:
    """Edit one passage of the middle of the file (``edit``: the file's new text, or None to try another passage)
    so that its size, modification time and sampled bytes stay the same (only the change time moves); return the
    passage's id."""
    before, st = fingerprint(path), path.stat()
    for doc_id in list(DOCS)[2500:2700]:
        text = edit(doc_id)
        data = make(text) if text is not None else b""
        if len(data) != st.st_size:
            continue
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        now = fingerprint(path)
        if now["samples_sha256"] == before["samples_sha256"]:
            assert now["size"] == before["size"] and now["stamp"]["mtime_ns"] == before["stamp"]["mtime_ns"]
            return doc_id
    raise AssertionError("no passage to edit outside the sampled bytes")


def _new_text(doc_id: str) -> str | None:
    return jsonl({**DOCS, doc_id: DOCS[doc_id].replace("honey", "money", 1)}) if "honey" in DOCS[doc_id] else None


def _build(path: Path, cache: Path) -> CorpusIndex:
    index = open_index(path, cache, Problems())
    assert index is not None
    return index


@pytest.mark.parametrize(("name", "make"), [("c.jsonl", _plain), ("c.jsonl.gz", _gz_with_a_stored_middle)])
def test_a_change_of_same_size_and_time_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 messages: io.StringIO, name: str, make: Callable[[str], bytes]
                                                 ) -> None:
    monkeypatch.setattr(source, "RACY_NS", 0)  # trust a fresh stamp: the change time alone must raise the doubt
    path = tmp_path / name
    path.write_bytes(make(TEXT))
    first = _build(path, tmp_path / "cache")
    doc_id = _change_in_place(path, make, _new_text)
    assert lookup_corpus([path], WANTED | {doc_id}, tmp_path / "cache") == read_corpus([path], wanted=WANTED | {doc_id})
    log = messages.getvalue()
    assert "checking its content" in log and "its content changed (same size, another checksum)" in log
    second = _build(path, tmp_path / "cache")
    assert second.folder == first.folder and second.build_id != first.build_id  # rebuilt in place
    assert lookup_corpus([path], {doc_id}, tmp_path / "cache") == {doc_id: DOCS[doc_id].replace("honey", "money", 1)}


def test_a_touched_file_is_checked_once_not_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     messages: io.StringIO) -> None:
    path = write(tmp_path / "c.jsonl", TEXT)
    first = _build(path, tmp_path / "cache")
    assert first.manifest["source"]["stamp"]["racy"]  # written just now: a second write could share its stamp
    monkeypatch.setattr(source, "RACY_NS", 0)
    os.utime(path)
    assert _build(path, tmp_path / "cache").build_id == first.build_id
    assert messages.getvalue().count("checking its content") == 1
    assert _build(path, tmp_path / "cache").build_id == first.build_id
    assert messages.getvalue().count("checking its content") == 1  # the new stamp was recorded


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _flip(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


def _forge(p: Path) -> None:
    manifest = json.loads(p.read_text())
    manifest["entries"] += 1
    p.write_text(json.dumps(manifest))


DAMAGE = [
    ("entries.bin", _truncate, "entries.bin has"),
    ("entries.bin", _flip, "entries.bin is damaged"),
    ("entries.crc", Path.unlink, "entries.crc is missing"),
    ("fences.u8", _flip, "fences.u8 fails its checksum"),
    ("lines.u8", _truncate, "lines.u8 has"),
    ("checkpoints.gzi", Path.unlink, "checkpoints.gzi is missing"),
    ("checkpoints.gzi", _flip, "checkpoints.gzi fails its checksum"),
    ("manifest.json", _truncate, "its manifest is unreadable"),
    ("manifest.json", _forge, "its manifest fails its own checksum"),
]


@pytest.mark.parametrize(("name", "damage", "why"), DAMAGE, ids=[f"{d[0]}-{d[1].__name__}" for d in DAMAGE])
def test_a_damaged_index_is_rebuilt(tmp_path: Path, messages: io.StringIO, name: str,
                                    damage: Callable[[Path], None], why: str) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT)
    index = _build(path, tmp_path / "cache")
    damage(index.folder / name)
    assert lookup_corpus([path], WANTED, tmp_path / "cache") == read_corpus([path], wanted=WANTED)
    assert why in messages.getvalue() and "rebuilding it" in messages.getvalue()
    assert _build(path, tmp_path / "cache").build_id != index.build_id


def test_a_line_that_is_not_its_entrys_rebuilds_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           messages: io.StringIO) -> None:
    """The last guard: an index that passes every check at open (here its manifest re-sealed with the new stamp,
    as a file system with a coarse clock could leave it) but points at a line of another id."""
    monkeypatch.setattr(source, "RACY_NS", 0)
    path = write(tmp_path / "c.jsonl", TEXT)
    index = _build(path, tmp_path / "cache")
    doc_id = _change_in_place(path, _plain, lambda d: TEXT.replace(f'"{d}"', f'"{d.replace("doc", "dox")}"'))
    m = index.manifest
    write_manifest(index.folder, {**m, "source": {**m["source"], "stamp": fingerprint(path)["stamp"] | {"racy": False}}})
    renamed = doc_id.replace("doc", "dox")
    assert lookup_corpus([path], {doc_id, renamed}, tmp_path / "cache") == {renamed: DOCS[doc_id]}
    assert f"holds {renamed!r}, not the id its entry was made for" in messages.getvalue()


def test_a_replaced_or_truncated_gz_is_never_read_through_the_old_index(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT)
    old = _build(path, tmp_path / "cache")
    other = {k: v.upper() for k, v in DOCS.items()}
    write(path, jsonl(other), members=3)
    assert lookup_corpus([path], WANTED, tmp_path / "cache") == {k: other[k] if i % 7 else f"T{i}\n{other[k]}"
                                                                for i, k in enumerate(DOCS) if k in WANTED}
    assert not old.folder.exists()  # the index of the replaced content is removed
    path.write_bytes(path.read_bytes()[:-300])
    with pytest.raises(InputError, match="the gzip data is damaged or truncated"):
        lookup_corpus([path], WANTED, tmp_path / "cache")
    assert not list((tmp_path / "cache" / "corpus-index").glob(".tmp-*"))


KILLED_BUILD = """
import sys, time
from autograde.core.errors import Problems
from autograde.corpus import build, index

real = build.chunk_entries
calls = []

def slow(*args, **kwargs):
    calls.append(1)
    if len(calls) == 3:
        print("building", flush=True)
        time.sleep(120)
    return real(*args, **kwargs)

build.chunk_entries = slow
index.open_index(sys.argv[1], sys.argv[2], Problems(), chunk_bytes=4096)
"""


def test_a_killed_build_leaves_no_temporary_folder(tmp_path: Path, messages: io.StringIO) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT)
    cache = tmp_path / "cache"
    child = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(path), str(cache)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "building"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    root = cache / "corpus-index"
    left = list(root.glob(".tmp-*"))
    assert left and any(left[0].iterdir())  # what the kill left: a half-built index
    assert lookup_corpus([path], WANTED, cache) == read_corpus([path], wanted=WANTED)
    assert not list(root.glob(".tmp-*")) and "left by a build that was stopped" in messages.getvalue()


CONCURRENT_BUILD = """
import sys, time
from autograde.core.errors import Problems
from autograde.corpus import build, index

real = build.chunk_entries
calls = []

def slow(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2 and sys.argv[3] == "slow":
        print("building", flush=True)
        time.sleep(2)
    return real(*args, **kwargs)

build.chunk_entries = slow
print(index.open_index(sys.argv[1], sys.argv[2], Problems(), chunk_bytes=65536).build_id, flush=True)
"""


def test_two_jobs_wanting_one_index_build_it_once(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT)
    cache = tmp_path / "cache"

    def start(mode: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", CONCURRENT_BUILD, str(path), str(cache), mode],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = start("slow")
    assert first.stdout is not None and first.stdout.readline().strip() == "building"
    second = start("fast")  # finds the lock held: waits, then uses the first one's index
    ids = [first.communicate(timeout=120)[0].strip(), second.communicate(timeout=120)[0].strip()]
    assert ids[0] == ids[1] and len(ids[0]) == 32, ids
    assert not list((cache / "corpus-index").glob(".tmp-*"))


def test_a_build_in_progress_is_not_swept(tmp_path: Path) -> None:
    root = tmp_path / "corpus-index"
    building = root / ".tmp-0123456789abcdef0123456789abcdef-4242"
    building.mkdir(parents=True)
    (root / ".locks").mkdir()
    with open(root / ".locks" / "0123456789abcdef0123456789abcdef", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the building process holds it
        sweep(root)
        assert building.is_dir()
    sweep(root)
    assert not building.exists()


def test_an_index_of_an_older_release_is_removed(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl.gz", TEXT)
    old = tmp_path / "cache" / "corpus-index" / "0123456789abcdef0123456789abcdef"
    old.mkdir(parents=True)
    (old / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": {"path": str(path.resolve())}}))
    (old / "blocks.lz4").write_bytes(b"an LZ4 copy of the corpus")
    assert lookup_corpus([path], {"doc-1"}, tmp_path / "cache") == {"doc-1": DOCS["doc-1"]}
    assert not old.exists()


def test_a_cache_dir_that_is_a_file_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", TEXT)
    (tmp_path / "cache").write_text("not a folder")
    with pytest.raises(InputError, match="cannot create the corpus index folder"):
        lookup_corpus([path], {"doc-1"}, tmp_path / "cache")
