"""Content-addressed grade cache: append-only JSONL segments, one folder per grader identity.

Layout: ``<cache_dir>/grades/<identity hash>/identity.json`` plus ``seg-<host>-<pid>-<time>.jsonl``
segments. Each writer appends whole batches with one ``write`` + ``fsync``; a process killed
mid-write leaves at most one torn last line (possibly cut inside a multi-byte character), which readers
skip. Concurrent shards never share a segment file, so appends need no lock (also on NFS). Only
deterministic results are stored: transient failures (timeouts, HTTP 5xx) are retried on the next run.

Several workflows may share one cache (a lab-wide cache on a shared filesystem). So that two jobs do not send
the same prompt at the same time, a job *claims* the keys of a batch before computing it: one file per key under
``claims/``, created atomically and whole (written to a private file, then hard-linked into place) and removed once
the result is appended. A key claimed by a
live job elsewhere is deferred; the job reads the other job's new results as they arrive (:meth:`GradeCache.refresh`)
and computes a deferred key itself only when its claimant died (same host: its process is gone; any host: the
claim is older than ``claim_ttl_s``). Results are keyed by content, so a key computed twice by accident is
stored twice with the same value: a grade is never lost and never duplicated in any output table.
Files are created group-readable (the process umask decides), so a shared cache works across accounts.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from autograde.core.ids import canonical_json, content_hash
from autograde.core.layout import CacheLayout
from autograde.core.log import logger
from autograde.core.text import atomic_write_text
from autograde.grading.base import GradeResult

RESULT_FIELDS = ("grade", "parse_status", "grade_probs", "expected_grade", "label_mass", "answer", "raw", "error",
                 "extra")
CLAIM_TTL_S = 1800.0
"""A claim older than this is stale (its claimant is presumed dead), whatever host made it."""
UNREADABLE_CLAIM_GRACE_S = 60.0
"""A claim file that cannot be read (no host, pid and time in it) is stale once it is this old."""


def cache_key(rendered: str, identity: dict[str, Any]) -> str:
    """The content key of one grade: hash of (rendered model input, grader identity)."""
    return content_hash({"input": rendered, "grader": identity}, length=40)


def identity_hash(identity: dict[str, Any]) -> str:
    return content_hash(identity, length=16)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


class GradeCache:
    """The cache of one grader identity."""

    def __init__(self, cache_dir: str | Path, identity: dict[str, Any], *, readonly: bool = False,
                 claim_ttl_s: float = CLAIM_TTL_S) -> None:
        """Open the cache of ``identity``; ``readonly`` creates nothing (estimates, reports) and refuses appends."""
        self.identity = identity
        self.readonly = readonly
        self.claim_ttl_s = claim_ttl_s
        self.folder = Path(CacheLayout.of(cache_dir).grades(identity_hash(identity)))
        self.claims = self.folder / "claims"
        self._segment: Any = None
        self._segment_name: str | None = None
        self._offsets: dict[str, int] = {}
        """segment file name -> bytes read so far (for :meth:`refresh`)."""
        self._held: set[str] = set()
        self.torn = 0
        if readonly:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self.claims.mkdir(exist_ok=True)
        ident_file = self.folder / "identity.json"
        if not ident_file.exists():
            atomic_write_text(ident_file, json.dumps(identity, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    @classmethod
    def open_readonly(cls, cache_dir: str | Path, identity: dict[str, Any]) -> GradeCache:
        """A cache to read from only (a missing folder reads as empty)."""
        return cls(cache_dir, identity, readonly=True)

    # -- reading ------------------------------------------------------------------------------------------

    def _read_new(self, keys: set[str] | None, out: dict[str, dict[str, Any]]) -> None:
        """Read the bytes appended to every segment since the last read (whole lines only)."""
        for seg in sorted(self.folder.glob("seg-*.jsonl")):
            start = self._offsets.get(seg.name, 0)
            try:
                with open(seg, "rb") as fh:
                    fh.seek(start)
                    data = fh.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1
            own = seg.name == self._segment_name
            if end == 0 and not own:
                # no complete line yet; a torn tail of a dead writer is counted when the file ends without newline
                if data and not self._writer_alive(seg.name):
                    self.torn += 1
                    self._offsets[seg.name] = start + len(data)
                continue
            self._offsets[seg.name] = start + end
            for bline in data[:end].splitlines():
                rec = self._parse(bline)
                if rec is None:
                    continue
                if keys is None or rec["key"] in keys:
                    out[rec["key"]] = rec
            tail = data[end:]
            if tail and not own and not self._writer_alive(seg.name):
                self.torn += 1
                self._offsets[seg.name] = start + len(data)

    def _parse(self, bline: bytes) -> dict[str, Any] | None:
        """One cache line, or None for a torn one (cut JSON, or cut inside a multi-byte character)."""
        try:
            rec = json.loads(bline.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            self.torn += 1
            return None
        if not isinstance(rec, dict) or "key" not in rec:
            self.torn += 1
            return None
        return rec

    @staticmethod
    def _writer_alive(segment_name: str) -> bool:
        """Whether the process that writes a segment is alive (assumed alive when on another host)."""
        parts = segment_name[len("seg-"):-len(".jsonl")].rsplit("-", 2)
        if len(parts) != 3 or parts[0] != socket.gethostname():
            return True
        try:
            return _pid_alive(int(parts[1]))
        except ValueError:
            return True

    def load(self, keys: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Every stored result (or only ``keys``), last write wins; torn lines are skipped (and counted)."""
        self._offsets.clear()
        self.torn = 0
        out: dict[str, dict[str, Any]] = {}
        self._read_new(keys, out)
        if self.torn:
            logger.warning("cache %s: skipped %d torn line(s) from an interrupted write", self.folder, self.torn)
        return out

    def refresh(self, keys: set[str]) -> dict[str, dict[str, Any]]:
        """Results for ``keys`` appended by other writers since the last :meth:`load` / :meth:`refresh`."""
        out: dict[str, dict[str, Any]] = {}
        self._read_new(keys, out)
        return out

    # -- claims -------------------------------------------------------------------------------------------

    def _claim_stale(self, path: Path) -> bool:
        try:
            host, pid, stamp = path.read_text(encoding="utf-8").split()
            age = time.time() - float(stamp)
        except (OSError, ValueError):
            # claims are created whole (:meth:`_create_claim`); an unreadable one is another writer's partial
            # file on a filesystem without hard links, or damage: live while young, stale after a grace period
            try:
                return time.time() - path.stat().st_mtime > UNREADABLE_CLAIM_GRACE_S
            except OSError:
                return False
        if age > self.claim_ttl_s:
            return True
        return host == socket.gethostname() and not _pid_alive(int(pid))

    def _create_claim(self, path: Path, content: bytes) -> bool:
        """Create the claim file ``path`` holding ``content``, atomically: written to a private file first, then
        hard-linked into place (fails when the claim exists; atomic on NFS too). A process killed at any point never
        leaves an empty claim, which would block the key for every later job."""
        tmp = path.with_name(f".{path.name}.{socket.gethostname()}-{os.getpid()}.tmp")
        try:
            tmp.write_bytes(content)
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            except OSError:  # a filesystem without hard links: exclusive create, then write
                try:
                    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "wb") as fh:
                    fh.write(content)
            return True
        finally:
            tmp.unlink(missing_ok=True)

    def claim(self, keys: list[str]) -> list[str]:
        """Claim ``keys`` for computing here; returns those granted (the others are being computed elsewhere)."""
        if self.readonly:
            return list(keys)
        granted = []
        me = f"{socket.gethostname()} {os.getpid()} {time.time():.3f}\n".encode()
        for key in keys:
            if key in self._held:
                granted.append(key)
                continue
            path = self.claims / key
            for _ in range(2):
                if not self._create_claim(path, me):
                    if self._claim_stale(path):
                        path.unlink(missing_ok=True)
                        continue
                    break
                self._held.add(key)
                granted.append(key)
                break
        return granted

    def release(self, keys: list[str] | set[str] | None = None) -> None:
        """Drop this process's claims on ``keys`` (all of them by default)."""
        for key in list(self._held if keys is None else keys):
            if key in self._held:
                (self.claims / key).unlink(missing_ok=True)
                self._held.discard(key)

    # -- writing ------------------------------------------------------------------------------------------

    def append(self, items: list[tuple[str, GradeResult]]) -> int:
        """Store deterministic results of one batch in one write; returns how many were stored."""
        lines = []
        for key, res in items:
            if res.parse_status != "ok" and not res.deterministic:
                continue
            rec = {"key": key, **{f: getattr(res, f) for f in RESULT_FIELDS}}
            lines.append(canonical_json(rec) + "\n")
        if not lines:
            return 0
        if self.readonly:
            raise RuntimeError(f"cache {self.folder} was opened read-only")
        if self._segment is None:
            self._segment_name = f"seg-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.jsonl"
            fd = os.open(self.folder / self._segment_name, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o666)
            self._segment = os.fdopen(fd, "a", encoding="utf-8")
        self._segment.write("".join(lines))
        self._segment.flush()
        os.fsync(self._segment.fileno())
        return len(lines)

    def close(self) -> None:
        self.release()
        if self._segment is not None:
            self._segment.close()
            self._segment = None


def result_from_record(rec: dict[str, Any]) -> GradeResult:
    fields: dict[str, Any] = {f: rec.get(f) for f in RESULT_FIELDS}
    fields["extra"] = fields["extra"] or {}
    return GradeResult(**fields)
