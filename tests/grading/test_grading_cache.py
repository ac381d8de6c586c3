"""The grade cache: SIGKILL mid-shard and resume; invalidation by item text and grader identity."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import shared_data

from autograde.config.model import GraderConfig
from autograde.core.ids import item_id
from autograde.core.tables import write_table
from autograde.grading.base import GradeRequest
from autograde.grading.cache import GradeCache
from autograde.grading.registry import make_grader
from autograde.grading.shard import grade_requests


def grid_inputs(root: Path, cache: str, batch_size: int) -> Path:
    """Pool, queries and bank tables/files of the DL20 grid, and a config that grades them."""
    rows = [json.loads(x) for x in shared_data("dl20-rocknroll-grid", "grid-full.jsonl").open(encoding="utf-8")]
    pool = pd.DataFrame([(r["query_id"], r["passage_id"], r["passage_text"]) for r in rows],
                        columns=["query_id", "passage_id", "text"]).drop_duplicates(["query_id", "passage_id"])
    write_table(root / "pool.parquet", pool, ["query_id", "passage_id"])
    write_table(root / "queries.parquet", pd.DataFrame([("940547", rows[0]["query_text"])],
                                                       columns=["query_id", "query_text"]))
    questions = sorted({r["question_text"] for r in rows})
    (root / "bank.jsonl").write_text(json.dumps({"query_id": "940547", "items": [
        {"question_id": item_id("940547", q), "question_text": q} for q in questions]}) + "\n")
    (root / "queries.tsv").write_text(f"940547\t{rows[0]['query_text']}\n")
    cfg = {"data": {"queries": str(root / "queries.tsv")}, "banks": {"q": str(root / "bank.jsonl")},
           "grading": {"cache_dir": cache, "batch_size": batch_size},
           "graders": [{"name": "sim", "backend": "embedded", "bank": "q", "options": {"torch_threads": 1}}]}
    path = root / f"config-{Path(cache).name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def grade_cmd(cfg: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "autograde.cli", "grade", "--config", str(cfg), "--grader", "sim",
            "--pool", str(cfg.parent / "pool.parquet"), "--queries", str(cfg.parent / "queries.parquet"),
            "--out", str(out)]


def cached_lines(cache: Path) -> int:
    return sum(sum(1 for _ in p.open()) for p in cache.glob("grades/*/seg-*.jsonl"))


@pytest.mark.model
@pytest.mark.slow
def test_sigkill_midway_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    killed_cfg = grid_inputs(tmp_path, str(tmp_path / "cache-killed"), batch_size=16)
    proc = subprocess.Popen(grade_cmd(killed_cfg, tmp_path / "killed.parquet"), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while cached_lines(tmp_path / "cache-killed") < 200 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the grading job finished before it could be killed; use a smaller batch"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = cached_lines(tmp_path / "cache-killed")
    assert 200 <= before < 3050 and not (tmp_path / "killed.parquet").exists()

    resumed = subprocess.run(grade_cmd(killed_cfg, tmp_path / "killed.parquet"), env=env, capture_output=True,
                             text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    stats = json.loads((tmp_path / "killed.stats.json").read_text())
    assert stats["cached"] >= before  # everything written before the kill came from the cache ...
    # (cached counts pairs; computed counts distinct model inputs: 3100 pairs have 3050 distinct inputs)
    assert stats["computed"] == 3050 - before  # ... and was not sent to the model again

    clean_cfg = grid_inputs(tmp_path, str(tmp_path / "cache-clean"), batch_size=16)
    clean = subprocess.run(grade_cmd(clean_cfg, tmp_path / "clean.parquet"), env=env, capture_output=True,
                           text=True, timeout=600)
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert (tmp_path / "killed.parquet").read_bytes() == (tmp_path / "clean.parquet").read_bytes()


def test_cache_invalidation_by_item_and_by_grader(tmp_path: Path) -> None:
    def reqs(second: str) -> list[GradeRequest]:
        passages = [("p1", "Bees fan nectar to make honey."), ("p2", "Tides follow the moon."),
                    ("p3", "Sourdough needs a starter.")]
        items = [("i1", "How do bees make honey?"), ("i2", second)]
        return [GradeRequest("q", "query", p, t, i, "question", txt) for p, t in passages for i, txt in items]

    cfg = GraderConfig(name="g", backend="embedded")
    g = make_grader(cfg)
    first = grade_requests(reqs("What pulls the tides?"), g, cfg, tmp_path)
    assert first.stats["computed"] == 6
    edited = grade_requests(reqs("What pulls the ocean tides?"), g, cfg, tmp_path)
    assert edited.stats["computed"] == 3 and edited.stats["cached"] == 3  # 3 passages x 1 edited item
    other = GraderConfig(name="g", backend="embedded", options={"thresholds": [0.1, 0.2, 0.3, 0.4, 0.5]})
    regraded = grade_requests(reqs("What pulls the ocean tides?"), make_grader(other), other, tmp_path)
    assert regraded.stats["computed"] == 6 and regraded.stats["cached"] == 0  # new grader identity: all again


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    cache = GradeCache(tmp_path, {"grader": "x"})
    (cache.folder / "seg-a.jsonl").write_text('{"key": "k1", "grade": 3, "parse_status": "ok"}\n{"key": "k2", "gra')
    assert set(cache.load()) == {"k1"}


def test_line_cut_inside_a_multibyte_character_is_skipped(tmp_path: Path) -> None:
    """A writer killed mid-line can cut a UTF-8 character in half: that line is torn, the others are read."""
    import os
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)  # a process that has exited: its segment will never grow again
    cache = GradeCache(tmp_path, {"grader": "x"})
    good = '{"key": "k1", "grade": 3, "parse_status": "ok", "answer": "caf\u00e9"}\n'.encode()
    torn = '{"key": "k2", "grade": 1, "parse_status": "ok", "answer": "\u00e9t\u00e9'.encode()[:-1]  # half of an é
    seg = cache.folder / f"seg-{socket.gethostname()}-{pid}-1.jsonl"
    seg.write_bytes(good + torn)
    loaded = cache.load()
    assert set(loaded) == {"k1"} and loaded["k1"]["answer"] == "caf\u00e9" and cache.torn == 1
    (cache.folder / f"seg-{socket.gethostname()}-{os.getpid()}-2.jsonl").write_bytes(good[:-1] + b"\xc3\n")
    assert set(GradeCache(tmp_path, {"grader": "x"}).load()) == {"k1"}  # a cut line followed by a newline, too
