"""Benchmark of LLM-RUBRIC's Table 1 in both protocols (calibrated qrels on DL20: benchmarks/rubric_calibrated.py).

    .venv/bin/python benchmarks/rubric_transfer.py dialogue            # Table 1: CV, 80/20 dialogues, unseen judges

``dialogue``: LLM-RUBRIC's synthetic data. (1) Table 1 of 5-fold CV grouped by dialogue; (2) train on 80% of the
dialogues, test on the unseen 20% through ``autograde rubric evaluate --train A --test B`` (one split per seed);
(3) unseen judges: train on the annotations of 80% of the judges, test on the others'. The splits over ``--seeds``
seeds (10), the cross-validation over ``--cv-seeds`` (3: it fits 25 networks per seed); per seed, the network against the per-judge-mean baseline (paired swap permutation test on
squared error). The fit time is benchmarks/rubric.py's (docs/generated/rubric_timing.md).

Writes Markdown under ``--out`` (default docs/generated/), which docs/rubric.md quotes (a test checks the quotes).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
SHARED = REPO.parent / "shared" / "data"
SYNTH = SHARED / "llm-rubric" / "synthetic"
DL20 = SHARED / "dl20"


def _write(out: Path, name: str, text: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(text)
    print(text)


def _split_configs(tmp: Path, data, train_rows: np.ndarray, test_rows: np.ndarray, name: str,
                   by_judge: bool, table1: bool) -> tuple[Path, Path]:
    """Two experiment configs over the released files: the texts (or the judges' human rows) of each side."""
    import yaml

    base = {"llm": str(SYNTH / "gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv"),
            "evaluation": {"permutation_resamples": 2000, "table1": table1}}
    human = SYNTH / "human_judges_synth_all_FIXED_ANON.tsv"
    files = []
    for side, rows in (("train", train_rows), ("test", test_rows)):
        texts = tmp / f"{name}-{side}-texts.tsv"
        texts.write_text("text_id\n" + "".join(f"{t}\n" for t in sorted(set(data.text_ids[rows].tolist()))))
        section = {**base, "texts": str(texts), "human": str(human)}
        if by_judge:  # the human rows of this side's judges only
            keep = set(data.judges[rows].tolist())
            lines = human.read_text().splitlines()
            col = lines[0].split("\t").index("annotator_id")
            subset = tmp / f"{name}-{side}-human.tsv"
            subset.write_text("\n".join([lines[0]] + [r for r in lines[1:] if r.split("\t")[col] in keep]) + "\n")
            section["human"] = str(subset)
        cfg = tmp / f"{name}-{side}.yaml"
        cfg.write_text(yaml.safe_dump({"rubric": section}))
        files.append(cfg)
    return files[0], files[1]


def _transfer(cfg_a: Path, cfg_b: Path, seed: int, out: Path) -> dict:
    from autograde.cli import main

    assert main(["rubric", "evaluate", "--train", str(cfg_a), "--test", str(cfg_b), "--seeds", str(seed),
                 "--out", str(out), "--quiet", "--threads", "1"]) == 0
    return json.loads(out.read_text())


def _n(value: float, digits: int) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def _pooled(reports: list[dict], title: str) -> str:
    """Table 1 over the seeds (each seed its own split) and the network vs judge-mean test per seed."""
    from autograde.rubric.table1 import table1_markdown

    t1 = {k: v for k, v in reports[0]["table1"].items()}
    systems = t1["systems"]
    seeds = [r["table1"]["seeds"][0] for r in reports]
    scores = [{s: {m: float("nan") if v is None else v for m, v in sc.items()} for s, sc in
               r["table1"]["per_seed"][0]["scores"].items()} for r in reports]  # JSON null = NaN
    summary = {s: {m: {"mean": float(np.mean([sc[s][m] for sc in scores])),  # NaN when any seed's is undefined
                       "std": float(np.std([sc[s][m] for sc in scores], ddof=1))}
                   for m in ("rmse", "pearson", "spearman", "kendall")} for s in systems}
    table = {**t1, "seeds": seeds, "summary": summary, "marks": {"rmse": {}, "pearson": {}},
             "rows": round(float(np.mean([r["table1"]["rows"] for r in reports])))}
    lines = [table1_markdown(table, title).replace("in every seed, for RMSE and Pearson", "(marks per seed below)"),
             "| seed | test annotations | unseen-judge annotations | network Pearson | judge mean Pearson | "
             "network RMSE | judge mean RMSE | p (squared error) | p (Pearson) |", "|---|---|---|---|---|---|---|---|---|"]
    for r, sc in zip(reports, scores, strict=True):
        test = {m: float("nan") if v is None else v
                for m, v in r["table1"]["per_seed"][0]["tests"].get("network vs judge_mean", {}).items()}
        lines.append(f"| {r['table1']['seeds'][0]} | {r['table1']['rows']} | {r['unseen_judge_rows']} | "
                     f"{_n(sc['network']['pearson'], 3)} | {_n(sc['judge_mean']['pearson'], 3)} | "
                     f"{_n(sc['network']['rmse'], 3)} | {_n(sc['judge_mean']['rmse'], 3)} | "
                     f"{_n(test.get('rmse', float('nan')), 4)} | {_n(test.get('pearson', float('nan')), 4)} |")
    wins = sum(sc["network"]["pearson"] > sc["judge_mean"]["pearson"] for sc in scores)
    sig = sum(r["table1"]["per_seed"][0]["tests"]["network vs judge_mean"]["rmse"] < 0.05 for r in reports)
    lines += ["", f"Network above the per-judge mean (Pearson) in {wins} of {len(reports)} seeds; p < 0.05 (squared "
              f"error) in {sig} of {len(reports)}.", ""]
    return "\n".join(lines)


def dialogue(out: Path, n_seeds: int, cv_seeds: int, table1: bool) -> None:
    from autograde.config.rubric import RubricConfig
    from autograde.rubric.dataset import group_folds
    from autograde.rubric.stages import load_training_data, run_evaluate

    cfg = RubricConfig.model_validate({"llm": str(SYNTH / "gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv"),
                                       "human": str(SYNTH / "human_judges_synth_all_FIXED_ANON.tsv"),
                                       "texts": str(SYNTH / "synth_dialogue_ids.tsv"),
                                       "evaluation": {"seeds": list(range(max(n_seeds, 1)))}})
    _, data = load_training_data(cfg)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        for name, by_judge in (("dialogues", False), ("judges", True)) if n_seeds else ():  # --seeds 0: CV only
            reports = []
            for seed in range(n_seeds):
                groups = data.judges if by_judge else data.groups
                side = group_folds(groups, 5, [seed, 80])
                a, b = _split_configs(tmp, data, np.flatnonzero(side != 0), np.flatnonzero(side == 0),
                                      f"{name}{seed}", by_judge, table1)
                reports.append(_transfer(a, b, seed, tmp / f"{name}{seed}.json"))
            title = ("Q0: trained on 80% of the dialogues, tested on the unseen 20% (a split per seed)" if not by_judge
                     else "Q0: trained on the annotations of 80% of the judges, tested on the unseen judges' (a split "
                     "per seed)")
            _write(out, f"table1_unseen_{name}.md", _pooled(reports, title))
        if cv_seeds:
            cv_cfg = cfg.model_copy(update={"evaluation": cfg.evaluation.model_copy(
                update={"seeds": list(range(cv_seeds))})})
            run_evaluate(cv_cfg, tmp / "cv.json", tmp / "cv.md", out_tex=out / "table1_cv.tex")
            _write(out, "table1_cv.md", "## Table 1" + (tmp / "cv.md").read_text().split("## Table 1", 1)[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["dialogue"], help="which benchmark")
    p.add_argument("--seeds", type=int, default=10, help="seeds of the dialogue protocols (0: skip them, only the "
                   "cross-validated Table 1)")
    p.add_argument("--cv-seeds", type=int, default=3, help="dialogue: seeds of the cross-validated Table 1 (0: skip; "
                   "every seed fits 25 networks)")
    p.add_argument("--split-rows", choices=["all", "basic"], default="all", help="dialogue splits: every Table 1 "
                   "row, or only those without an extra network (random, LLM Q0, LLM-RUBRIC and the baselines)")
    p.add_argument("--out", default=str(REPO / "docs" / "generated"), help="folder of the Markdown outputs")
    args = p.parse_args()
    torch.set_num_threads(1)
    dialogue(Path(args.out), args.seeds, args.cv_seeds, args.split_rows == "all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
