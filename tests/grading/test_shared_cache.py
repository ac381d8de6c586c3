"""Two grading jobs sharing one cache never compute the same key twice, and both get every grade.

The jobs run in two real processes on the same requests and the same cache folder. The grader is a small
deterministic one defined here (each grade takes a few milliseconds), so the jobs overlap; the cache and the
shard runner are the real ones under test.
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest, GradeResult
from autograde.grading.cache import GradeCache
from autograde.grading.shard import grade_requests

N = 240


class SlowLengthGrader:
    """grade = len(passage) % 6, after a short sleep (so two jobs overlap)."""

    def identity(self) -> dict[str, Any]:
        return {"backend": "test-slow-length", "version": "1"}

    def render(self, r: GradeRequest) -> str:
        return f"{r.item_text}\n{r.passage_text}"

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        import time

        time.sleep(0.004 * len(requests))
        return [GradeResult(grade=len(r.passage_text) % 6) for r in requests]

    def close(self) -> None:
        pass


def requests() -> list[GradeRequest]:
    return [GradeRequest("q", "query", f"p{i}", f"passage {i} " + "x" * i, "q/i", "question", "item") for i in range(N)]


def job(cache_dir: str, out: str, start: Any) -> None:
    start.wait()  # both processes have imported everything: they start grading together
    cfg = GraderConfig(name="slow", backend="embedded")
    res = grade_requests(requests(), SlowLengthGrader(), cfg, cache_dir, batch_size=8, poll_s=0.05)
    Path(out).write_text(json.dumps({"stats": res.stats, "grades": res.grades["grade"].tolist()}))


def test_two_jobs_share_the_work_without_duplicates(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(2)
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    procs = [ctx.Process(target=job, args=(str(tmp_path / "cache"), str(o), start)) for o in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    a, b = (json.loads(o.read_text()) for o in outs)
    expected = [len(r.passage_text) % 6 for r in requests()]
    assert a["grades"] == expected and b["grades"] == expected
    assert a["stats"]["computed"] + b["stats"]["computed"] == N  # every key computed exactly once
    assert a["stats"]["computed"] > 0 and b["stats"]["computed"] > 0  # the work was shared
    cache = GradeCache.open_readonly(tmp_path / "cache", SlowLengthGrader().identity())
    lines = [ln for seg in cache.folder.glob("seg-*.jsonl") for ln in seg.read_text().splitlines()]
    assert len(lines) == N and len({json.loads(ln)["key"] for ln in lines}) == N
    assert not any(cache.claims.iterdir())  # every claim released
    ident = cache.folder / "identity.json"
    assert ident.stat().st_mode & 0o044 == 0o044  # group- and world-readable under the default umask


def test_a_claim_is_never_empty_and_an_unreadable_one_expires(tmp_path: Path) -> None:
    """A job killed while claiming must not block a key for every later job: claims are created whole (a private
    file hard-linked into place), and a claim file that cannot be read (empty: killed between create and write by
    an older writer, or damaged) is live while young and stale after the grace period."""
    import os
    import time

    from autograde.grading.cache import UNREADABLE_CLAIM_GRACE_S

    cache = GradeCache(tmp_path, {"backend": "test", "version": "1"})
    assert cache.claim(["k1"]) == ["k1"]
    host, pid, _ = (cache.claims / "k1").read_text().split()
    assert int(pid) == os.getpid() and sorted(p.name for p in cache.claims.iterdir()) == ["k1"]  # no private file left

    other = GradeCache(tmp_path, {"backend": "test", "version": "1"})
    (cache.claims / "k2").write_bytes(b"")  # a claimant killed after creating its claim, before writing it
    assert other.claim(["k1", "k2"]) == []  # k1: a live claimant; k2: maybe being written right now
    old = time.time() - UNREADABLE_CLAIM_GRACE_S - 1
    os.utime(cache.claims / "k2", (old, old))
    assert other.claim(["k2"]) == ["k2"]  # stale: taken over
    assert (cache.claims / "k2").read_text().split()[1] == str(os.getpid())
