"""``make data``: the reference files downloaded from a real HTTP server on loopback, each checked against the
manifest's sha256; a corrupted download is refused and removed; a rerun downloads nothing; without a server every
file fails at once with one message."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from support.helpers import REPO, SHARED_DATA, has_shared_data

from autograde.refdata.fetch import fetch, verify
from autograde.refdata.manifest import load_manifest


class FileServer:
    """A static file server on 127.0.0.1 serving ``root``; counts the requests per path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[FileServer, Path]]:
    """Three public files: a plain one, one in a subfolder, and a source file a part of which is extracted."""
    root = tmp_path / "public"
    (root / "repo" / "sub").mkdir(parents=True)
    (root / "repo" / "queries.tsv").write_text("q1\tbees\nq2\ttides\n")
    (root / "repo" / "sub" / "qrels.txt").write_bytes(b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    (root / "repo" / "board.py").write_text('x = 1\nBOARD = {"a": 1,\n  "b": 2\n}\n\ny = 2\n')
    with FileServer(root) as srv:
        yield srv, root


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest(path: Path, url: str) -> Path:
    board = b'{"a": 1,\n  "b": 2\n}\n'
    qrels = b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
    files = [
        {"path": "small/queries.tsv", "what": "queries", "size": 17, "sha256": _sha(b"q1\tbees\nq2\ttides\n"),
         "url": f"{url}/repo/queries.tsv", "source": "the test server"},
        {"path": "small/qrels.txt", "what": "qrels", "size": len(qrels), "sha256": _sha(qrels),
         "url": f"{url}/repo/sub/qrels.txt", "source": "the test server"},
        {"path": "small/q1.txt", "what": "qrels of q1", "size": 20, "sha256": _sha(b"q1 0 d1 2\nq1 0 d2 0\n"),
         "url": None, "lines_of": {"file": "small/qrels.txt", "prefix": "q1 "}, "source": "derived"},
        {"path": "small/board.json", "what": "a leaderboard", "size": len(board), "sha256": _sha(board),
         "url": f"{url}/repo/board.py", "extract": {"start": "BOARD = ", "end": "\n}\n"}, "source": "a dict in code"},
        {"path": "other/grid.jsonl", "what": "no public file", "size": 3, "sha256": _sha(b"{}\n"), "url": None,
         "source": "made by hand, not published"},
    ]
    path.write_text(yaml.safe_dump({"folder": "data", "files": files}, sort_keys=False))
    return path


def _make_data(data_dir: Path, flags: str) -> subprocess.CompletedProcess[str]:
    """``make data`` as a user runs it (the install step taken as done: the test runs in the project's venv)."""
    venv = REPO / ".venv"
    args = ["make", "-C", str(REPO), "-o", f"{venv}/.installed", "data", f"VENV={venv}", f"PY={sys.executable}",
            f"DATA_DIR={data_dir}", f"DATA_FLAGS={flags}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=os.environ.copy())


def test_make_data_downloads_checks_and_a_rerun_downloads_nothing(served: tuple[FileServer, Path],
                                                                  tmp_path: Path) -> None:
    srv, _ = served
    manifest = _manifest(tmp_path / "manifest.yaml", srv.url)
    data = tmp_path / "data"
    run = _make_data(data, f"--manifest {manifest}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (data / "small/queries.tsv").read_text() == "q1\tbees\nq2\ttides\n"
    assert (data / "small/q1.txt").read_bytes() == b"q1 0 d1 2\nq1 0 d2 0\n"  # derived from the qrels
    assert (data / "small/board.json").read_text() == '{"a": 1,\n  "b": 2\n}\n'  # the part of board.py
    assert not (data / "other").exists()  # no public file: listed, not made
    assert "[skip] other/grid.jsonl: not downloadable: made by hand, not published" in run.stdout
    assert sorted(srv.requests) == ["/repo/board.py", "/repo/queries.tsv", "/repo/sub/qrels.txt"]
    assert not list(data.rglob(".*.part"))

    srv.requests.clear()
    again = _make_data(data, f"--manifest {manifest}")
    assert again.returncode == 0, again.stdout + again.stderr
    assert srv.requests == []  # a rerun downloads nothing
    assert again.stdout.count("present, checksum ok") == 4


def test_a_corrupted_download_is_refused_and_removed(served: tuple[FileServer, Path], tmp_path: Path) -> None:
    srv, public = served
    manifest = load_manifest(_manifest(tmp_path / "manifest.yaml", srv.url))
    data = tmp_path / "data"
    (public / "repo" / "queries.tsv").write_text("q1\tbees\nq2\ttidal\n")  # same size, other bytes
    out = {o.path: o for o in fetch(manifest, data)}
    bad = out["small/queries.tsv"]
    assert bad.status == "refused" and not bad.ok
    assert "refused, not the reference file (17 bytes, sha256 " in bad.detail and "the download was removed" in bad.detail
    assert not (data / "small/queries.tsv").exists() and not list(data.rglob(".*.part"))
    assert out["small/qrels.txt"].status == "downloaded"  # the others are not held up

    (public / "repo" / "queries.tsv").write_text("q1\tbees\nq2\ttides\n")  # the server is fixed
    (data / "small/qrels.txt").write_bytes(b"q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 1\n")  # a copy here was changed
    out = {o.path: o for o in fetch(manifest, data)}
    assert out["small/queries.tsv"].status == "downloaded"
    assert out["small/qrels.txt"].status == "downloaded"  # the changed copy was removed and fetched again
    assert all(o.status == "present" for o in verify(manifest, data) if o.path.startswith("small/"))


def test_without_a_server_every_file_fails_at_once_with_one_message(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on: connections are refused, as without a network
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    manifest = load_manifest(_manifest(tmp_path / "manifest.yaml", dead))
    t0 = time.monotonic()
    out = fetch(manifest, tmp_path / "data", timeout=30)
    assert time.monotonic() - t0 < 10
    failed = {o.path: o.detail for o in out if not o.ok}
    assert set(failed) == {"small/queries.tsv", "small/qrels.txt", "small/q1.txt", "small/board.json"}
    host = dead.removeprefix("http://")
    for path in ("small/queries.tsv", "small/qrels.txt", "small/board.json"):
        assert failed[path].startswith(f"not downloaded: cannot reach {host} (")
        assert "no internet here? Run `make data` on a machine with internet, or download http" in failed[path]
    assert "derived from small/qrels.txt, which is missing" in failed["small/q1.txt"]
    assert not (tmp_path / "data").exists()  # nothing written, not even folders
    # a file extracted from a larger download: the hint says which part to save, not to save the download as it
    board = failed["small/board.json"]
    assert f"download {dead}/repo/board.py and save the text from just after 'BOARD = ' through the first '}}' on " \
           f"a line of its own as {tmp_path / 'data/small/board.json'}" in board
    assert f"download {dead}/repo/board.py to" not in board
    assert f"download {dead}/repo/queries.tsv to {tmp_path / 'data/small/queries.tsv'} by hand" in failed["small/queries.tsv"]


def test_data_verify_exits_non_zero_when_files_are_missing(served: tuple[FileServer, Path], tmp_path: Path) -> None:
    """``autograde data verify`` on an empty folder: every file missing, exit status 1 (it was 0); each line says how
    the file is made. Once the files are there, exit status 0."""
    srv, _ = served
    manifest = _manifest(tmp_path / "manifest.yaml", srv.url)
    data = tmp_path / "data"
    run = subprocess.run([sys.executable, "-m", "autograde.cli", "data", "verify", "--into", str(data), "--manifest",
                          str(manifest)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.count("[miss]") == 5 and "5 missing" in run.stdout
    assert f"[miss] small/queries.tsv: not in {data} (`make data` downloads it, or download {srv.url}/repo/queries.tsv" \
           in run.stdout
    assert _make_data(data, f"--manifest {manifest}").returncode == 0
    (data / "other").mkdir()
    (data / "other/grid.jsonl").write_bytes(b"{}\n")  # the file without a public source, made by hand
    run = subprocess.run([sys.executable, "-m", "autograde.cli", "data", "verify", "--into", str(data), "--manifest",
                          str(manifest)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(not has_shared_data(), reason=f"reference data missing: {SHARED_DATA} is not present")
def test_make_data_from_a_mirror_of_the_reference_copy_gives_the_layout_the_experiments_read(tmp_path: Path) -> None:
    """The shipped manifest, its files served from a copy of ../shared/data on loopback (``--mirror``): every
    pinned file arrives where the configs read it, byte for byte."""
    with FileServer(SHARED_DATA) as srv:
        data = tmp_path / "data"
        run = _make_data(data, f"--mirror {srv.url}")
        assert run.returncode == 0, run.stdout + run.stderr
    manifest = load_manifest()
    for f in manifest.files:
        if f.sha256 is not None:
            assert (data / f.path).read_bytes() == (SHARED_DATA / f.path).read_bytes(), f.path
        else:
            assert not (data / f.path).exists()
    assert "2 not pinned" in run.stdout
