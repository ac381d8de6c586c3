"""Measure the numbers README.md states about running the tool, and write them to docs/measurements.json.

README.md takes these numbers from that file, and ``tests/test_readme.py`` checks that every one of them is the
file's (and that the example's job count is what a dry run of the workflow plans today). Rerun this after a change
that moves them, on an otherwise idle machine, and commit the file:

    .venv/bin/python benchmarks/measure_readme.py              # the example: cold run, no-op rerun, edit rerun
    .venv/bin/python benchmarks/measure_readme.py --dl20       # also validate the DL20-size experiment (../shared)
    .venv/bin/python benchmarks/measure_readme.py --tests      # also time `make test` (installs already done)

The example runs in a copy of the working tree (tracked and untracked, not ignored files) with an empty grade
cache, as on a fresh clone after ``make install``. It prints a table and keeps the entries it did not remeasure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "docs" / "test_durations.json"
"""Per-test seconds of the last full run (``make test``): the suite schedules its longest files first from it."""
OUT = ROOT / "docs" / "measurements.json"
EDITED_BANK = "config/example/bank/questions.jsonl"


def copy_tree(dest: Path) -> None:
    """The working tree's files (what a clone holds, plus uncommitted work) into ``dest``."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def snakemake(wd: Path, *args: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(wd / "src")}
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "snakemake", "-c2", *args], cwd=wd, capture_output=True, text=True,
                         env=env)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"snakemake failed in {wd}:\n{res.stderr[-4000:]}")
    return seconds, res.stdout + res.stderr


def jobs_done(log: str) -> int:
    found = re.findall(r"(\d+) of (\d+) steps \(100%\) done", log)
    return int(found[-1][1]) if found else 0


def rules_run(log: str) -> list[str]:
    """The rules of the jobs a Snakemake log shows, sorted."""
    return sorted(set(re.findall(r"^\s*(?:local)?rule (\w+):", log, re.M)) - {"all"})


def edit_one_question(wd: Path) -> None:
    """Change the text of the first question of the first query (a typical hand edit)."""
    path = wd / EDITED_BANK
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["items"][0]["question_text"] = rec["items"][0]["question_text"].rstrip("?") + " in practice?"
    lines[0] = json.dumps(rec, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def measure_example() -> dict[str, dict[str, float | int]]:
    with tempfile.TemporaryDirectory(prefix="autograde-measure-") as tmp:
        wd = Path(tmp)
        copy_tree(wd)
        cold, log = snakemake(wd)
        site = wd / "results" / "site"
        files = [f for f in site.rglob("*") if f.is_file() and f.name != ".snakemake_timestamp"]
        corr = (wd / "results" / "reports" / "correlation.tsv").read_text(encoding="utf-8").splitlines()
        site_stats = {"pages": sum(1 for f in files if f.suffix == ".html"), "files": len(files),
                      "plots": sum(1 for f in files if f.suffix == ".svg"),
                      "megabytes": round(sum(f.stat().st_size for f in files) / 1e6, 1),
                      "leaderboards_correlated": len(corr) - 1}
        again, log2 = snakemake(wd)
        if "Nothing to be done" not in log2:
            sys.exit("the rerun of the example was not a no-op")
        edit_one_question(wd)
        edit, log3 = snakemake(wd)
    return {"example": {"seconds": round(cold), "jobs": jobs_done(log)}, "example_site": site_stats,
            "example_rerun": {"seconds": round(again, 1), "jobs": 0},
            "edit_rerun": {"seconds": round(edit), "jobs": jobs_done(log3), "rules": rules_run(log3)}}


def measure_dl20() -> dict[str, dict[str, float | int]]:
    shared = ROOT.parent / "shared"
    if not (shared / "tools" / "synth_dl20_runs.py").exists():
        sys.exit("--dl20 needs ../shared beside the checkout")
    subprocess.run(["make", "dl20-synth"], cwd=ROOT, check=True, capture_output=True)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config",
                          "config/experiments/dl20-synthetic.yaml"], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(res.stderr[-3000:])
    counts = json.loads(res.stdout)
    return {"dl20_validate": {"seconds": round(time.perf_counter() - t0), "ranked_passages": counts["ranked_passages"]}}


def _junit_durations(paths: list[Path]) -> dict[str, float]:
    """Per-test seconds (setup, call and teardown) from pytest's JUnit files: ``path::test`` -> seconds."""
    import xml.etree.ElementTree as ET

    out: dict[str, float] = {}
    for p in paths:
        for case in ET.parse(p).getroot().iter("testcase"):
            file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
            out[f"{file}::{case.get('name')}"] = round(out.get(f"{file}::{case.get('name')}", 0.0)
                                                       + float(case.get("time") or 0.0), 2)
    return out


def _counts(stdout: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in stdout.splitlines():  # one pytest summary line per part: "580 passed, 6 warnings in 1800.0s"
        if re.fullmatch(r"\d+ \w+(, \d+ \w+)* in [\d.]+s( \(.*\))?", line.strip("= ")):
            for v, k in re.findall(r"(\d+) (passed|skipped|failed)", line):
                counts[k] = counts.get(k, 0) + int(v)
    return counts


def _make(target: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = subprocess.run(["make", "-s", target], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"make {target} failed:\n{(res.stdout + res.stderr)[-4000:]}")
    return time.perf_counter() - t0, res.stdout


def measure_tests() -> dict[str, dict[str, float | int]]:
    """``make test`` as README.md gives it (system packages, lint, the parallel part with the serial tests beside it; installs
    already done) and ``make test-fast``; keeps every test's duration of the full run in docs/test_durations.json."""
    logs = ROOT / "logs" / "tests"
    seconds, out = _make("test")
    durations = _junit_durations([logs / "parallel.xml", logs / "serial.xml"])
    DURATIONS.write_text(json.dumps(dict(sorted(durations.items(), key=lambda kv: (-kv[1], kv[0]))), indent=1)
                         + "\n", encoding="utf-8")
    fast_seconds, fast_out = _make("test-fast")
    return {"test_suite": {"minutes": round(seconds / 60, 1), "tests": len(durations), **_counts(out)},
            "test_fast": {"minutes": round(fast_seconds / 60, 1), **_counts(fast_out)}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dl20", action="store_true", help="also time validating the DL20-size experiment")
    ap.add_argument("--tests", action="store_true", help="also time `make test` (lint and the whole suite)")
    ap.add_argument("--no-example", action="store_true", help="skip the example runs")
    args = ap.parse_args()
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    if not args.no_example:
        data.update(measure_example())
    if args.dl20:
        data.update(measure_dl20())
    if args.tests:
        data.update(measure_tests())
    data["measured_on"] = {"date": dt.date.today().isoformat(), "machine": f"{platform.machine()}, "
                           f"{os.cpu_count()} cores", "python": platform.python_version()}
    OUT.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    cold = float(data.get("example", {}).get("seconds") or 0)
    print(f"{'measurement':<16} {'value':<50} {'ratio to the cold example run':>30}")
    for key, entry in sorted(data.items()):
        if key != "measured_on":
            secs = entry.get("seconds") if isinstance(entry, dict) else None
            ratio = f"{float(secs) / cold:.2f}x" if cold and secs is not None and key.startswith("example") or \
                key == "edit_rerun" else ""
            print(f"{key:<16} {json.dumps(entry):<50} {ratio:>30}")
    print(f"written to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
