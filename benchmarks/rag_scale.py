"""Benchmark of the workflow at TREC RAG 2024 size: the synthetic experiment of config/experiments/rag-scale.yaml
(300 queries, 100 runs x 100 passages, 20 with RAG answers, 10 questions per query, the embedded grader), measured
in one benchmark run and written to docs/measurements.json (``rag_scale``).

    nice .venv/bin/python benchmarks/rag_scale.py --verify           # the full size (an hour or more on 2 cores)
    .venv/bin/python benchmarks/rag_scale.py --small --verify        # the scaled-down copy (30 queries x 10 runs)

``make rag-synth`` (``make rag-synth-small``) makes the data. The experiment runs in a copy of the working tree with
an empty cache, on 2 cores, in this order (each time with its ratio to the full run):

- the DAG: a dry run of the full experiment (Snakemake's start, the config, the input checks, the plan);
- the full run; then a rerun that must be a no-op;
- a one-question edit (the text of the first question of the first query, in a copy of the bank): the rerun grades
  that item's pairs in one shard and recomputes the analysis of that query; then again a no-op;
- with ``--verify``: a from-scratch analysis of the edited state (the per-query analysis cache deleted, every job
  forced; grades come from the grade cache), compared file by file with the incremental results;
- a one-run addition: a new system whose top 20 are passages already in the pool (the top 20 of another run, in
  another order): the rerun must grade 0 pairs.

Every job runs with the probe of ``benchmarks/jobprobe/`` (its rule, the wall and CPU seconds of its start-up
(Snakemake's preamble, imports, config) and of its work, its peak memory), so the table has, per rule, the jobs,
their start-up and work CPU and the peak memory of any job of the rule; also the sizes of ``results/`` and of the
review site, the cache, and the load average of the shared machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dl20_edit import verify
from measure_readme import OUT, ROOT, copy_tree, jobs_done, rules_run

PROBE = Path(__file__).resolve().parent / "jobprobe"
SIZES = {"full": ("rag-synth", "rag-scale.yaml", "results/rag-scale"),
         "small": ("rag-synth-small", "rag-scale-small.yaml", "results/rag-scale-small")}
CONFIG = "experiment.yaml"


def prepare(wd: Path, data: str, config: str) -> None:
    """The working tree, the synthetic data (linked; the runs one by one, so that a run can be added), a copy of the
    bank, and the config reading them."""
    copy_tree(wd)
    src = ROOT / "work" / data
    (wd / "data" / "runs").mkdir(parents=True)
    for run in sorted((src / "runs").glob("*.run")):
        (wd / "data" / "runs" / run.name).symlink_to(run)
    shutil.copy(src / "questions.jsonl", wd / "data" / "questions.jsonl")
    text = (ROOT / "config" / "experiments" / config).read_text(encoding="utf-8")
    text = text.replace(f"work/{data}/runs/*.run", "data/runs/*.run").replace(f"work/{data}/questions.jsonl",
                                                                              "data/questions.jsonl")
    (wd / "work").mkdir()
    (wd / "work" / data).symlink_to(src)
    (wd / CONFIG).write_text(text, encoding="utf-8")


def snakemake(wd: Path, probe: Path, *args: str) -> tuple[float, str]:
    """Snakemake on 2 cores in ``wd``, every job probed into ``probe``; (seconds, log)."""
    env = {**os.environ, "PYTHONPATH": f"{PROBE}{os.pathsep}{wd / 'src'}", "AUTOGRADE_JOBPROBE": str(probe)}
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "snakemake", "-c2", "--config", f"experiment={CONFIG}", *args],
                         cwd=wd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"snakemake {' '.join(args)} failed in {wd}:\n{res.stderr[-4000:]}")
    return seconds, res.stdout + res.stderr


def planned_jobs(log: str) -> int:
    found = re.findall(r"^total\s+(\d+)\s*$", log, re.M)
    return int(found[0]) if found else 0


def edit_first_question(path: Path) -> str:
    """Change the text of the first question of the first query of a plain JSONL bank; returns the query id."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    item = rec["items"][0]
    item["question_text"] = item["question_text"].rstrip("?") + " in practice?"
    item.pop("question_id", None)  # a hand edit: the id follows the text
    lines[0] = json.dumps(rec, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(rec["query_id"])


def add_pooled_run(wd: Path, name: str) -> int:
    """A new system: another run's ranking with its top 20 shuffled (passages already pooled); returns its lines."""
    runs = sorted((wd / "data" / "runs").glob("*.run"))
    rng = random.Random(0)
    by_query: dict[str, list[str]] = {}
    for line in runs[len(runs) // 2].read_text(encoding="utf-8").splitlines():
        q, _, doc, _rank, _score, _tag = line.split()
        by_query.setdefault(q, []).append(doc)
    out = []
    for q, docs in by_query.items():
        top = docs[:20]
        rng.shuffle(top)
        out += [f"{q} Q0 {d} {k + 1} {1000 - k} {name}\n" for k, d in enumerate(top + docs[20:])]
    (wd / "data" / "runs" / f"{name}.run").write_text("".join(out), encoding="utf-8")
    return len(out)


def shard_counts(wd: Path, results: str, since: float) -> dict[str, int]:
    """Pairs of the grading shards written after ``since``: looked up in the grade cache and graded by the model."""
    total = {"shards": 0, "pairs": 0, "cached": 0, "computed": 0}
    for f in (wd / results / "grades").glob("*/shards/*.stats.json"):
        if f.stat().st_mtime >= since:
            stats = json.loads(f.read_text(encoding="utf-8"))
            total["shards"] += 1
            for k in ("pairs", "cached", "computed"):
                total[k] += int(stats.get(k) or 0)
    return total


def evaluation_counts(wd: Path, results: str, since: float) -> dict[str, int]:
    """Queries computed and read back by the evaluation jobs that ran after ``since``."""
    total = {"computed": 0, "cached": 0}
    for f in (wd / results / "eval").glob("*/*.stats.json"):
        if f.stat().st_mtime >= since:
            stats = json.loads(f.read_text(encoding="utf-8"))
            for k in total:
                total[k] += int(stats.get(k) or 0)
    return total


def per_rule(probe: Path) -> dict[str, dict[str, float]]:
    """Per rule, from the probe's lines: jobs, start-up and work CPU seconds (sums), the largest start-up wall time,
    and the peak memory of its largest job."""
    out: dict[str, dict[str, float]] = {}
    if not probe.exists():
        return out
    for line in probe.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        s = out.setdefault(r["rule"], {"jobs": 0, "startup_cpu": 0.0, "work_cpu": 0.0, "work_seconds": 0.0,
                                       "startup_seconds_max": 0.0, "peak_rss_mb": 0.0})
        s["jobs"] += 1
        s["startup_cpu"] = round(s["startup_cpu"] + r["startup_cpu"], 2)
        s["work_cpu"] = round(s["work_cpu"] + r["work_cpu"], 2)
        s["work_seconds"] = round(s["work_seconds"] + r["work_seconds"], 2)
        s["startup_seconds_max"] = max(s["startup_seconds_max"], r["startup_seconds"])
        s["peak_rss_mb"] = max(s["peak_rss_mb"], r["peak_rss_mb"])
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["work_cpu"]))


def benchmark_rss(wd: Path) -> dict[str, float]:
    """Peak ``max_rss`` (MB) per rule from Snakemake's benchmark files (the rules that have a ``benchmark:``)."""
    out: dict[str, float] = {}
    for f in (wd / "logs" / "benchmarks").rglob("*.tsv"):
        rows = f.read_text(encoding="utf-8").splitlines()
        head, values = rows[0].split("\t"), rows[1].split("\t")
        parts = f.relative_to(wd / "logs" / "benchmarks").with_suffix("").parts
        rule = "/".join(parts) if parts[0] in ("reports", "metrics") else parts[0]  # reports/site, reports/<grader>
        rss = values[head.index("max_rss")]
        if rss not in ("", "NA", "-"):
            out[rule] = max(out.get(rule, 0.0), round(float(rss), 1))
    return out


def folder_size(path: Path) -> dict[str, int]:
    files = [p for p in path.rglob("*") if p.is_file()] if path.exists() else []
    return {"bytes": sum(p.stat().st_size for p in files), "files": len(files)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="the scaled-down copy (30 queries x 10 runs); prints only")
    ap.add_argument("--verify", action="store_true", help="also compare the edit with a from-scratch analysis")
    ap.add_argument("--keep", type=Path, help="run in this (new) folder, kept, instead of a temporary one")
    ap.add_argument("--no-write", action="store_true", help="print, do not write docs/measurements.json")
    args = ap.parse_args()
    data, config, results = SIZES["small" if args.small else "full"]
    subprocess.run(["make", data], cwd=ROOT, check=True, capture_output=True)
    manifest = json.loads((ROOT / "work" / data / "manifest.json").read_text(encoding="utf-8"))
    load = os.getloadavg()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="autograde-rag-scale-") as tmp:
        wd = args.keep or Path(tmp)
        wd.mkdir(parents=True, exist_ok=True)
        prepare(wd, data, config)
        dag, log0 = snakemake(wd, wd / "probe-dag.jsonl", "-n")
        full, log = snakemake(wd, wd / "probe-full.jsonl")
        rules_full = per_rule(wd / "probe-full.jsonl")
        rss_bench = benchmark_rss(wd)
        sizes = {"results": folder_size(wd / results), "site": folder_size(wd / results / "site"),
                 "site_index_bytes": (wd / results / "site" / "index.html").stat().st_size
                 if (wd / results / "site" / "index.html").exists() else 0,
                 "cache": {p.name: folder_size(p) for p in sorted((wd / "cache").iterdir()) if p.is_dir()}}
        noop, log2 = snakemake(wd, wd / "probe-noop.jsonl")
        if "Nothing to be done" not in log2:
            sys.exit("the rerun of the experiment was not a no-op")
        query = edit_first_question(wd / "data" / "questions.jsonl")
        load_edit = os.getloadavg()
        t_edit = time.time()
        edit, log3 = snakemake(wd, wd / "probe-edit.jsonl")
        edit_rules = per_rule(wd / "probe-edit.jsonl")
        edit_pairs = shard_counts(wd, results, t_edit)
        edit_queries = evaluation_counts(wd, results, t_edit)
        noop2, log4 = snakemake(wd, wd / "probe-noop2.jsonl")
        if "Nothing to be done" not in log4:
            sys.exit("the rerun after the edit was not a no-op")
        differ = verify(wd, CONFIG, results) if args.verify else None
        added_lines = add_pooled_run(wd, "added-run")
        t_add = time.time()
        add, log5 = snakemake(wd, wd / "probe-add.jsonl")
        add_pairs = shard_counts(wd, results, t_add)
        add_rules = per_rule(wd / "probe-add.jsonl")
    entry: dict[str, Any] = {
        "queries": manifest["queries"], "runs": manifest["runs"], "answer_runs": manifest["answer_runs"],
        "ranked_passages": manifest["ranked_passages"], "pooled_passages": manifest["pooled_passages"],
        "questions": manifest["questions"],
        "dag_seconds": round(dag, 1), "planned_jobs": planned_jobs(log0),
        "full_seconds": round(full), "full_jobs": jobs_done(log),
        "noop_seconds": round(noop, 1),
        "edit_seconds": round(edit), "edit_jobs": jobs_done(log3), "edit_rules": rules_run(log3), "edit_query": query,
        "edit_rule_seconds": edit_rules, "edit_pairs": edit_pairs, "edit_evaluation_queries": edit_queries,
        "ratio": round(edit / full, 4),
        "add_run_seconds": round(add), "add_run_jobs": jobs_done(log5), "add_run_lines": added_lines,
        "add_run_pairs": add_pairs, "add_run_rule_seconds": add_rules,
        "rules": rules_full, "benchmark_max_rss_mb": rss_bench,
        "peak_rss_mb": max((r["peak_rss_mb"] for r in rules_full.values()), default=0.0),
        "startup_cpu_seconds": round(sum(r["startup_cpu"] for r in rules_full.values()), 1),
        "work_cpu_seconds": round(sum(r["work_cpu"] for r in rules_full.values()), 1),
        "sizes": sizes, "load_average": [round(x, 2) for x in load],
        "load_average_edit": [round(x, 2) for x in load_edit], "benchmark_minutes": round((time.time() - started) / 60),
        "date": dt.date.today().isoformat(), "cores": 2,
    }
    if differ is not None:
        entry["verified_identical"] = not differ
    report(entry, differ)
    if not args.no_write and not args.small:
        stored = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
        stored["rag_scale"] = entry
        OUT.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"written to {OUT.relative_to(ROOT)} (rag_scale)")
    return 0 if not differ else 1


def report(e: dict[str, Any], differ: list[str] | None) -> None:
    print(f"{e['queries']} queries x {e['runs']} runs ({e['answer_runs']} with answers), {e['ranked_passages']:,} "
          f"ranked passages, {e['pooled_passages']:,} pooled, {e['questions']:,} questions\n")
    print(f"{'step':<30} {'seconds':>9} {'jobs':>6} {'ratio to the full run':>23}")
    for name, secs, jobs in (("DAG (dry run)", e["dag_seconds"], e["planned_jobs"]),
                             ("full run", e["full_seconds"], e["full_jobs"]), ("no-op rerun", e["noop_seconds"], 0),
                             ("one-question edit rerun", e["edit_seconds"], e["edit_jobs"]),
                             ("one-run addition rerun", e["add_run_seconds"], e["add_run_jobs"])):
        print(f"{name:<30} {secs:>9.1f} {jobs:>6} {secs / e['full_seconds']:>22.2%}")
    print(f"\nthe edit graded {e['edit_pairs']['computed']} of {e['edit_pairs']['pairs']} pairs "
          f"({e['edit_pairs']['shards']} shard(s)); the evaluation computed {e['edit_evaluation_queries']['computed']} "
          f"queries and read {e['edit_evaluation_queries']['cached']} back")
    print(f"the run addition graded {e['add_run_pairs']['computed']} of {e['add_run_pairs']['pairs']} pairs")
    for title, rules in (("full run", e["rules"]), ("edit rerun", e["edit_rule_seconds"]),
                         ("run addition rerun", e["add_run_rule_seconds"])):
        print(f"\n{'rule (' + title + ')':<30} {'jobs':>5} {'start-up CPU':>13} {'work CPU':>10} {'work s':>8} "
              f"{'peak RSS MB':>12}")
        for rule, r in rules.items():
            print(f"{rule:<30} {r['jobs']:>5.0f} {r['startup_cpu']:>13.1f} {r['work_cpu']:>10.1f} "
                  f"{r['work_seconds']:>8.1f} {r['peak_rss_mb']:>12.0f}")
    print(f"\nSnakemake's benchmark files, max_rss (MB): {json.dumps(e['benchmark_max_rss_mb'])}")
    s = e["sizes"]
    print(f"\nresults: {s['results']['bytes'] / 1e6:.0f} MB in {s['results']['files']} files; site: "
          f"{s['site']['bytes'] / 1e6:.1f} MB in {s['site']['files']} files (index.html {s['site_index_bytes'] / 1e3:.0f} "
          f"kB); cache: " + ", ".join(f"{k} {v['bytes'] / 1e6:.0f} MB" for k, v in s["cache"].items()))
    print(f"load average at the start: {' '.join(map(str, e['load_average']))}; before the edit: "
          f"{' '.join(map(str, e['load_average_edit']))}; {e['benchmark_minutes']} minutes in all")
    if differ is not None:
        print("from-scratch analysis: " + ("identical results" if not differ else f"{len(differ)} files differ: "
                                           + ", ".join(differ[:20])))


if __name__ == "__main__":
    sys.exit(main())
