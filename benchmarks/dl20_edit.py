"""Benchmark of the edit loop at TREC scale: a one-question edit of the DL20-size synthetic experiment against its
full run, measured in the same benchmark run, and written to docs/measurements.json (``dl20_edit``).

    .venv/bin/python benchmarks/dl20_edit.py            # full run, no-op rerun, one-question edit rerun
    .venv/bin/python benchmarks/dl20_edit.py --verify   # then also: a from-scratch analysis of the edited state
                                                        # (per-query cache deleted, every job forced) gives the
                                                        # same results, file by file

The experiment is config/experiments/dl20-synthetic.yaml (59 runs x 54 queries x 1,000 passages, the embedded
grader, 8 grading shards; ``make dl20-synth`` makes its runs, ../shared holds its queries, banks and qrels), run in
a copy of the working tree with an empty cache, on 2 cores as README.md's numbers are. The edit changes the text of
the first question of the first query in a copy of the question bank: the rerun grades one shard's pairs of that
item and recomputes the analysis of that query only (the evaluation's stats say how many queries it computed).
The table shows each time and its ratio to the full run, and the seconds of every rule the edit reran (from
Snakemake's benchmark files). The machine's load average when the benchmark started and before the edit rerun is kept
with the numbers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_readme import OUT, ROOT, copy_tree, jobs_done, rules_run, snakemake

SHARED = ROOT.parent / "shared"
CONFIG = ROOT / "config" / "experiments" / "dl20-synthetic.yaml"
BANK = "../shared/data/dl20/dl20-questions.jsonl.gz"
RESULTS = "results/dl20-synthetic"


def prepare(wd: Path) -> None:
    """The working tree, the synthetic runs (linked), a copy of the question bank and the config reading it."""
    copy_tree(wd)
    (wd / "work").mkdir(exist_ok=True)
    (wd / "work" / "dl20-synth").symlink_to(ROOT / "work" / "dl20-synth")
    (wd / "data").mkdir(exist_ok=True)
    (wd / "data" / "dl20-questions.jsonl.gz").write_bytes((ROOT / BANK).read_bytes())
    text = CONFIG.read_text(encoding="utf-8").replace(BANK, "data/dl20-questions.jsonl.gz")
    (wd / "dl20.yaml").write_text(text.replace("../shared/", f"{SHARED}/"), encoding="utf-8")


def edit_one_question(wd: Path) -> str:
    """Change the text of the first question of the first query; returns the query id."""
    path = wd / "data" / "dl20-questions.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    rec = json.loads(lines[0])
    item = rec["items"][0]
    item["question_text"] = item["question_text"].rstrip("?") + " in practice?"
    item.pop("question_id", None)  # a hand edit: the id follows the text
    lines[0] = json.dumps(rec, ensure_ascii=False)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0))
    return str(rec["query_id"])


def rule_seconds(wd: Path, since: float) -> dict[str, float]:
    """Seconds per rule of the jobs that ran after ``since`` (Snakemake's benchmark files, summed per rule)."""
    out: dict[str, float] = {}
    for f in (wd / "logs" / "benchmarks").rglob("*.tsv"):
        if f.stat().st_mtime >= since:
            rule = f.relative_to(wd / "logs" / "benchmarks").parts[0]
            rows = f.read_text(encoding="utf-8").splitlines()
            out[rule] = round(out.get(rule, 0.0) + float(rows[1].split("\t")[0]), 1)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def evaluation_counts(wd: Path) -> dict[str, int]:
    """Queries computed and read back by the evaluation jobs of the grader (summed over its qrels variants)."""
    total = {"computed": 0, "cached": 0}
    for f in (wd / RESULTS / "eval" / "minilm-questions").glob("*.stats.json"):
        stats = json.loads(f.read_text(encoding="utf-8"))
        for k in total:
            total[k] += int(stats[k])
    return total


def verify(wd: Path, config: str = "dl20.yaml", results: str = RESULTS) -> list[str]:
    """A from-scratch analysis of the same state (no per-query cache, every job forced; grades come from the grade
    cache): the files that differ from the incremental run's (stats files say how a result was made: left out)."""
    import shutil

    sys.path.insert(0, str(ROOT / "tools"))
    from results_digest import digests

    before = digests(wd / results)
    shutil.rmtree(wd / "cache" / "analysis", ignore_errors=True)
    snakemake(wd, "--config", f"experiment={config}", "--forceall")
    after = digests(wd / results)
    keys = {k for k in set(before) | set(after) if not k.endswith(".stats.json")}
    return sorted(k for k in keys if before.get(k) != after.get(k))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verify", action="store_true", help="also compare with a from-scratch analysis of the edit")
    ap.add_argument("--keep", type=Path, help="run in this folder (kept) instead of a temporary one")
    ap.add_argument("--no-write", action="store_true", help="print, do not write docs/measurements.json")
    args = ap.parse_args()
    if not (SHARED / "tools" / "synth_dl20_runs.py").exists():
        sys.exit(f"this benchmark needs the reference data in {SHARED} (see docs/experiments.md)")
    subprocess.run(["make", "dl20-synth", f"PYTHON={sys.executable}"], cwd=ROOT, check=True, capture_output=True)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="autograde-dl20-edit-") as tmp:
        wd = args.keep or Path(tmp)
        wd.mkdir(parents=True, exist_ok=True)
        prepare(wd)
        cfg = ("--config", "experiment=dl20.yaml")
        full, log = snakemake(wd, *cfg)
        noop, log2 = snakemake(wd, *cfg)
        if "Nothing to be done" not in log2:
            sys.exit("the rerun of the DL20 experiment was not a no-op")
        query = edit_one_question(wd)
        load_edit = os.getloadavg()
        t_edit = time.time()
        edit, log3 = snakemake(wd, *cfg)
        per_rule = rule_seconds(wd, t_edit)
        counts = evaluation_counts(wd)
        noop2, log4 = snakemake(wd, *cfg)
        if "Nothing to be done" not in log4:
            sys.exit("the rerun after the edit was not a no-op")
        differ = verify(wd) if args.verify else None
    entry = {"full_seconds": round(full), "full_jobs": jobs_done(log), "edit_seconds": round(edit),
             "edit_jobs": jobs_done(log3), "edit_rules": rules_run(log3), "edit_query": query,
             "edit_evaluation_queries": counts, "noop_seconds": round(noop, 1),
             "ratio": round(edit / full, 4), "load_average": [round(x, 2) for x in load],
             "load_average_edit": [round(x, 2) for x in load_edit],
             "date": dt.date.today().isoformat(), "cores": 2}
    print(f"{'run':<28} {'seconds':>9} {'jobs':>6} {'ratio to the full run':>23}")
    for name, secs, jobs in (("full run", full, jobs_done(log)), ("no-op rerun", noop, 0),
                             ("one-question edit rerun", edit, jobs_done(log3))):
        print(f"{name:<28} {secs:>9.1f} {jobs:>6} {secs / full:>22.2%}")
    print(f"\nthe edit reran (seconds per rule): {json.dumps(per_rule)}")
    print(f"evaluation of the edited grader's qrels: {counts['computed']} queries computed, {counts['cached']} read back")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in load)}; "
          f"before the edit rerun: {' '.join(f'{x:.2f}' for x in load_edit)}")
    if differ is not None:
        print("from-scratch analysis: " + ("identical results" if not differ else f"{len(differ)} files differ: "
                                           + ", ".join(differ[:20])))
        entry["verified_identical"] = not differ
    if not args.no_write:
        data = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
        data["dl20_edit"] = entry
        OUT.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"written to {OUT.relative_to(ROOT)} (dl20_edit)")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
