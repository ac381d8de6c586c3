"""How close ``autograde plan --measure`` comes to the wall time of each model job of a run, start-up included.

In a copy of the working tree with an empty grade cache (as a fresh clone): ``autograde plan --measure N`` of the
bundled example (each job's start-up measured in a fresh process, its prompts at the rate measured on N prompts),
then the workflow itself; the wall time of each model job is Snakemake's benchmark file of that job. Printed per
job: planned seconds, measured seconds, their ratio, and beside it the plan without the start-up (the model's load
in a warm process, what the plan gave before) as the baseline of the same run. Writes ``plan_accuracy`` into
docs/measurements.json (``--write``).

    .venv/bin/python benchmarks/plan_accuracy.py --measure 64 --write
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "measurements.json"
GOAL = 1.5
"""The plan of each job is within this factor of its measured wall time."""


def _measure_readme():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("measure_readme", ROOT / "benchmarks" / "measure_readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plan(wd: Path, measure: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(wd / "src")}
    res = subprocess.run([sys.executable, "-m", "autograde.cli", "plan", "--measure", str(measure), "--threads", "2",
                          "--json"], cwd=wd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        sys.exit(f"autograde plan failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout)


def measured_jobs(wd: Path, rule: str) -> dict[tuple[str, str], float]:
    """(model, shard) -> wall seconds of each job of ``rule`` (Snakemake's benchmark files)."""
    out = {}
    for f in sorted((wd / "logs" / "benchmarks" / rule).glob("*/*.tsv")):
        header, values = f.read_text().splitlines()[:2]
        out[(f.parent.name, f.stem)] = float(dict(zip(header.split("\t"), values.split("\t"), strict=True))["s"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--measure", type=int, default=64, help="prompts the plan times per model (default: %(default)s)")
    ap.add_argument("--write", action="store_true", help="write plan_accuracy into docs/measurements.json")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="plan-accuracy-") as tmp:
        wd = Path(tmp)
        _measure_readme().copy_tree(wd)
        planned = plan(wd, args.measure)
        _measure_readme().snakemake(wd)
        rows = []
        for p in planned["graders"]:
            m = p.get("measurement")
            if not m:
                continue
            jobs = measured_jobs(wd, "grade" if p["stage"] == "grading" else p["stage"])
            rate = (m["input_tokens"] + m["output_tokens"]) / m["seconds"] if m["seconds"] else 0.0
            for s in p["shards"]:
                wall = jobs.get((p["name"], s["shard"]))
                if wall is None or s["seconds"] is None:
                    continue
                without = m["load_seconds"] + ((s["input_tokens"] or 0) + (s["output_tokens"] or 0)) / rate
                rows.append({"stage": p["stage"], "model": p["name"], "job": s["shard"], "planned_s": s["seconds"],
                             "measured_s": round(wall, 1), "ratio": round(wall / s["seconds"], 2),
                             "without_startup_s": round(without, 1), "ratio_without": round(wall / without, 2),
                             "startup_s": m.get("startup_seconds")})
    load_after = os.getloadavg()
    print("| stage | model | job | planned s | measured s | measured / planned | plan without start-up s | "
          "measured / that |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['stage']} | {r['model']} | {r['job']} | {r['planned_s']} | {r['measured_s']} | {r['ratio']} | "
              f"{r['without_startup_s']} | {r['ratio_without']} |")
    worst = max((max(r["ratio"], 1 / r["ratio"]) for r in rows), default=float("nan"))
    worst_without = max((max(r["ratio_without"], 1 / r["ratio_without"]) for r in rows), default=float("nan"))
    print(f"\nworst factor between plan and job: {worst:.2f} (goal <= {GOAL}); without the start-up: "
          f"{worst_without:.2f}; load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end")
    if args.write:
        data = json.loads(OUT.read_text(encoding="utf-8"))
        data["plan_accuracy"] = {"date": dt.date.today().isoformat(), "measure": args.measure, "jobs": rows,
                                 "worst_factor": round(worst, 2), "worst_factor_without_startup": round(worst_without, 2),
                                 "goal": GOAL, "load_average": [round(load_before[0], 2), round(load_after[0], 2)]}
        OUT.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
