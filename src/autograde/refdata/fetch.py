"""Downloading the reference data: each file of the manifest from its public source into the data folder, with its
size and sha256 checked before it is kept (``make data``, ``autograde data fetch``).

A file already there with the right checksum is not downloaded again. A download whose checksum differs is
refused and removed (a mirror, if any, is tried next); a copy already there that differs is removed and fetched
again. A host that cannot be reached is not tried again in the same run, so a machine without internet gets one
message per file at once. Files without a public URL are listed with where they come from.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from autograde.core.ids import file_sha256
from autograde.core.log import logger
from autograde.refdata.manifest import Manifest, RefFile

__all__ = ["Outcome", "by_hand", "fetch", "verify"]

FileStatus = Literal["present", "downloaded", "derived", "failed", "refused", "missing", "differs", "no source",
                 "not pinned"]
NOT_OK: frozenset[str] = frozenset({"failed", "refused", "differs", "missing"})
"""Statuses that make ``fetch`` / ``verify`` exit with status 1 (``missing``: ``verify`` found no file; ``fetch``
says ``no source`` instead for a file it cannot download)."""
_CHUNK = 1 << 20
USER_AGENT = "autograde-data-fetch"


@dataclass(frozen=True)
class Outcome:
    """What happened to one file: its status and one line for the user."""

    path: str
    status: FileStatus
    detail: str

    @property
    def ok(self) -> bool:
        return self.status not in NOT_OK


def _matches(path: Path, f: RefFile) -> bool:
    return f.sha256 is not None and path.stat().st_size == f.size and file_sha256(str(path)) == f.sha256


def _where_from(f: RefFile, target: Path) -> str:
    if f.lines_of is not None:
        return f"derived from {f.lines_of.file}"
    return f"`make data` downloads it, or {by_hand(f, f.url, target)}" if f.url else f"no public file: {f.source}"


def by_hand(f: RefFile, url: str, target: str | Path) -> str:
    """How to make the file by hand from ``url``: a download saved as ``target``, or, for a file extracted from a
    larger one (a dict in a source file), the part to cut out of it.

    >>> from autograde.refdata.manifest import load_manifest
    >>> f = load_manifest().file("dl20/official_dl20_leaderboard.json")
    >>> by_hand(f, "https://x/y.py", "dl20/official_dl20_leaderboard.json")  # doctest: +ELLIPSIS
    "download https://x/y.py and save the text from just after 'official_DL20_Leaderboard:Dict[str,float] = ' through the first '}' on a line of its own as dl20/official_dl20_leaderboard.json (...)"
    """
    if f.extract is None:
        return f"download {url} to {target} by hand"
    end = f.extract.end.strip("\n") or repr(f.extract.end)
    ending = f"the first {end!r} on a line of its own" if f.extract.end.startswith("\n") else f"the first {end!r}"
    return (f"download {url} and save the text from just after {f.extract.start!r} through {ending} as {target} "
            f"(the file is that part of the download, not the download itself)")


def verify(manifest: Manifest, folder: str | Path) -> list[Outcome]:
    """Check the files under ``folder`` against the manifest without any download."""
    root = Path(folder)
    out = []
    for f in manifest.files:
        p = root / f.path
        if not p.is_file():
            out.append(Outcome(f.path, "missing", f"not in {root} ({_where_from(f, p)})"))
        elif f.sha256 is None:
            out.append(Outcome(f.path, "not pinned", f"present, not checked (the manifest pins no checksum; sha256 "
                                                     f"{file_sha256(str(p))})"))
        elif _matches(p, f):
            out.append(Outcome(f.path, "present", "checksum ok"))
        else:
            out.append(Outcome(f.path, "differs", f"{p} is not the reference file ({p.stat().st_size:,} bytes, sha256 "
                                                  f"{file_sha256(str(p))}; the manifest says {f.size:,} bytes, {f.sha256})"))
    return out


class _Unreachable(Exception):
    """A host that cannot be reached (no route, no name resolution, connection refused or timed out)."""


class _Downloader:
    """Downloads with a timeout; remembers hosts that cannot be reached so that no file waits for them again."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.unreachable: dict[str, str] = {}

    def get(self, url: str, target: Path, limit: int) -> tuple[Path, int, str]:
        """Stream ``url`` into a temporary file beside ``target`` (made only once the server answers); returns
        (that file, bytes, sha256). Raises :class:`_Unreachable` or ``OSError`` (nothing left behind)."""
        host = urlparse(url).netloc or url
        if host in self.unreachable:
            raise _Unreachable(f"cannot reach {host} ({self.unreachable[host]})")
        req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        h = hashlib.sha256()
        n = 0
        tmp: Path | None = None
        try:
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # URLs from the manifest
                    target.parent.mkdir(parents=True, exist_ok=True)
                    tmp = Path(tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")[1])
                    with open(tmp, "wb") as fh:
                        for block in iter(lambda: resp.read(_CHUNK), b""):
                            n += len(block)
                            if n > limit:
                                raise OSError(f"{url}: more than {limit:,} bytes, not the expected file")
                            h.update(block)
                            fh.write(block)
            except urllib.error.HTTPError as exc:
                raise OSError(f"{url} answered HTTP {exc.code} {exc.reason}") from None
            except urllib.error.URLError as exc:
                reason = exc.reason
                self.unreachable[host] = str(reason.strerror if isinstance(reason, OSError) and reason.strerror
                                             else reason)
                raise _Unreachable(f"cannot reach {host} ({self.unreachable[host]})") from None
            except (TimeoutError, ConnectionError) as exc:
                self.unreachable[host] = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                raise _Unreachable(f"cannot reach {host} ({self.unreachable[host]})") from None
        except BaseException:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            raise
        assert tmp is not None
        return tmp, n, h.hexdigest()


def _extract(data: bytes, f: RefFile) -> bytes | None:
    """The part of ``data`` the manifest names (None when a marker is missing)."""
    assert f.extract is not None
    start, end = f.extract.start.encode(), f.extract.end.encode()
    i = data.find(start)
    if i < 0:
        return None
    j = data.find(end, i + len(start))
    return None if j < 0 else data[i + len(start): j + len(end)]


def _lines_of(source: Path, prefix: str) -> bytes:
    with open(source, "rb") as fh:
        return b"".join(line for line in fh if line.startswith(prefix.encode()))


def _keep(tmp: Path, target: Path) -> None:
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


class _Fetch:
    def __init__(self, root: Path, mirror: str | None, timeout: float, allow_unpinned: bool) -> None:
        self.root = root
        self.mirror = mirror.rstrip("/") if mirror else None
        self.allow_unpinned = allow_unpinned
        self.net = _Downloader(timeout)

    def one(self, f: RefFile) -> Outcome:
        target = self.root / f.path
        if target.is_file():
            if f.sha256 is None:
                return Outcome(f.path, "present", "present (the manifest pins no checksum: not checked)")
            if _matches(target, f):
                return Outcome(f.path, "present", "present, checksum ok")
            try:
                target.unlink()
            except OSError as exc:
                return Outcome(f.path, "differs", f"{target} is not the reference file and cannot be removed "
                                                  f"({exc.strerror or exc}); remove it, then rerun")
            logger.warning("%s: the copy here was not the reference file (checksum differs): removed, fetching it "
                           "again", target)
        if f.lines_of is not None:
            return self.derive(f, target)
        if self.mirror and f.sha256 is not None:  # a copy of the whole folder: every pinned file, checked
            return self.download(f, target)
        if f.url is None:
            return Outcome(f.path, "no source", f"not downloadable: {f.source}")
        if f.sha256 is None and not self.allow_unpinned:
            return Outcome(f.path, "not pinned", f"not fetched: the manifest pins no checksum to check it against "
                                                 f"(autograde data fetch --allow-unpinned downloads it from {f.url} "
                                                 "and prints its sha256)")
        return self.download(f, target)

    def derive(self, f: RefFile, target: Path) -> Outcome:
        assert f.lines_of is not None
        source = self.root / f.lines_of.file
        if not source.is_file():
            return Outcome(f.path, "failed", f"not made: it is derived from {f.lines_of.file}, which is missing")
        data = _lines_of(source, f.lines_of.prefix)
        if hashlib.sha256(data).hexdigest() != f.sha256:
            return Outcome(f.path, "refused", f"the lines of {f.lines_of.file} starting with {f.lines_of.prefix!r} "
                                              "do not have the manifest's checksum; nothing written")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")[1])
        tmp.write_bytes(data)
        _keep(tmp, target)
        return Outcome(f.path, "derived", f"derived from {f.lines_of.file} ({len(data):,} bytes)")

    def download(self, f: RefFile, target: Path) -> Outcome:
        urls = [f"{self.mirror}/{f.path}"] if self.mirror else [u for u in [f.url, *f.mirrors] if u]
        problems: list[str] = []
        refused = unreachable = False
        limit = (f.size * 4 + (1 << 20)) if f.size is not None and f.extract is None else 1 << 31
        for url in urls:
            tmp: Path | None = None
            try:
                tmp, n, digest = self.net.get(url, target, limit)
                if f.extract is not None and not self.mirror:
                    part = _extract(tmp.read_bytes(), f)
                    if part is None:
                        problems.append(f"{url}: the part to extract ({f.extract.start.strip()!r}) is not in it")
                        continue
                    tmp.write_bytes(part)
                    n, digest = len(part), hashlib.sha256(part).hexdigest()
                if f.sha256 is not None and (digest != f.sha256 or n != f.size):
                    refused = True
                    problems.append(f"{url}: refused, not the reference file ({n:,} bytes, sha256 {digest}; the "
                                    f"manifest says {f.size:,} bytes, {f.sha256}); the download was removed")
                    continue
                _keep(tmp, target)
                tmp = None
                note = "" if f.sha256 is not None else f"; not checked, its sha256 is {digest} (pin it in the manifest)"
                return Outcome(f.path, "downloaded", f"downloaded ({n:,} bytes) from {url}{note}")
            except _Unreachable as exc:
                unreachable = True
                if str(exc) not in problems:
                    problems.append(str(exc))
            except OSError as exc:
                problems.append(str(exc))
            finally:
                if tmp is not None:
                    tmp.unlink(missing_ok=True)
        if refused:
            fix = "the public file changed: tell the maintainers (the manifest names the file it expected)"
        elif unreachable and not self.mirror:
            fix = f"no internet here? Run `make data` on a machine with internet, or {by_hand(f, urls[0], target)}"
        elif self.mirror:
            fix = f"download {urls[0]} to {target} by hand"  # a mirror serves the file itself
        else:
            fix = by_hand(f, urls[0], target)
        return Outcome(f.path, "refused" if refused else "failed",
                       f"not downloaded: {'; '.join(problems)} (fix: {fix})")


def fetch(manifest: Manifest, folder: str | Path, mirror: str | None = None, timeout: float = 30.0,
          allow_unpinned: bool = False, only: list[str] | None = None) -> list[Outcome]:
    """Make every file of ``manifest`` (or those whose path starts with one of ``only``) present under ``folder``.

    ``mirror``: a base URL serving the data folder's layout (``<mirror>/<path>``), used instead of the public
    URLs for every file with a pinned checksum, also those without a public source (a lab's copy of the folder). Returns one :class:`Outcome` per file, in manifest order.
    """
    root = Path(folder)
    job = _Fetch(root, mirror, timeout, allow_unpinned)
    out = []
    for f in manifest.files:
        if only and not any(f.path.startswith(o) for o in only):
            continue
        outcome = job.one(f)
        logger.debug("%s: %s", f.path, outcome.detail)
        out.append(outcome)
    return out
