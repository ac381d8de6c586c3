"""LLM-RUBRIC's Table 1: the oracle inputs, the swap permutation test, and the train/test protocol
(``autograde rubric evaluate --train A --test B``) with judges matched by id and unseen judges counted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from support.rubric_data import tiny_tables, write_tiny_files

from autograde.cli import main
from autograde.rubric.dataset import build_dataset
from autograde.rubric.definition import Rubric
from autograde.rubric.systems import oracle_data, q0_only_data
from autograde.rubric.table1 import SeedPredictions, latex_table, swap_test, table1, table1_markdown

QUICK = {"hidden1": 8, "hidden2": 8, "learning_rate": 0.02, "batch_size": 32, "members": 2, "patience": 5}


def test_oracle_and_q0_inputs(tiny_rubric: Rubric) -> None:
    """Oracle: the LLM's 7 features + the judge's own Q1 answer one-hot (3), learning Q0 only; NA -> zeros."""
    llm, human = tiny_tables(12)
    data = build_dataset(tiny_rubric, llm, human)
    oracle = oracle_data(data)
    assert oracle.features.shape == (36, 7 + 3) and oracle.questions == ("Q0",)
    assert oracle.feature_names[-3:] == ("answer Q1=1", "answer Q1=2", "answer Q1=3")
    na = data.answers[:, 1] < 0
    assert na.any() and (oracle.features[na, 7:] == 0).all()
    assert (oracle.features[~na, 7:].sum(axis=1) == 1).all()
    assert oracle_data(data, with_llm=False).features.shape == (36, 3)
    assert q0_only_data(data).feature_names == ("Q0=1", "Q0=2", "Q0=3", "Q0=4")


def test_swap_test_is_exact_in_spirit() -> None:
    """Identical predictions: p = 1; predictions that differ only by noise: p not small; a clear win: p small."""
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 5, 200).astype(float)
    good, noisy = truth + rng.normal(0, 0.3, 200), truth + rng.normal(0, 1.5, 200)
    assert swap_test(good, good, truth, "rmse", 500, rng) == 1.0
    assert swap_test(good, noisy, truth, "rmse", 500, rng) < 0.01
    assert swap_test(good, noisy, truth, "pearson", 500, rng) < 0.01
    other = truth + rng.normal(0, 0.3, 200)
    assert swap_test(good, other, truth, "rmse", 500, rng) > 0.05


def test_table1_constant_predictor_is_undefined_not_beaten() -> None:
    """The training mean is constant on a test set: its Pearson is NaN (a mean computed in pieces is constant up
    to floating-point noise, which once gave 1.7e-16 and marks against it), shown as n/a in Markdown and LaTeX,
    and no system is marked as beating it on Pearson; RMSE still compares it."""
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 5, 120).astype(float)
    noisy_mean = np.full(120, float(np.mean(truth[:60]))) + np.tile([0.0, 1e-16], 60)  # noise at 1e-16
    runs = [SeedPredictions(seed, {"network": truth + rng.normal(0, 0.5, 120), "constant": noisy_mean,
                                   "random": rng.integers(1, 5, 120).astype(float)}, truth) for seed in (0, 1)]
    report = table1(runs, 200)
    assert np.isnan(report["summary"]["constant"]["pearson"]["mean"])
    assert all(np.isnan(ps["tests"]["network vs constant"]["pearson"]) for ps in report["per_seed"])
    assert all("C" not in marks for marks in report["marks"]["pearson"].values())
    assert report["marks"]["pearson"]["constant"] == []
    assert "C" in report["marks"]["rmse"]["network"]  # RMSE is defined: the network beats the constant
    md, tex = table1_markdown(report, "t"), latex_table(report, "t")
    row = next(line for line in md.splitlines() if "constant (training mean)" in line)
    assert row.split(" | ")[3] == "n/a" and "nan" not in md.lower().replace("n/a", "")
    assert "constant (training mean) & " in tex and "& n/a &" in tex


def _configs(tmp_path: Path) -> tuple[Path, Path]:
    train = write_tiny_files(tmp_path / "train", n_texts=40)
    test = write_tiny_files(tmp_path / "test", n_texts=15)
    # the test set: other texts, and one judge ('newcomer') the training set never saw
    rows = test["human"].read_text().splitlines()
    rows += [r.replace("\tfan", "\tnewcomer").replace("\tt", "\tn") for r in rows[1:] if r.endswith("\tfan")]
    test["human"].write_text("\n".join(rows) + "\n")
    llm_rows = test["llm"].read_text().splitlines()
    llm_rows += [r.replace("t", "n", 1) for r in llm_rows[1:]]
    test["llm"].write_text("\n".join(llm_rows) + "\n")
    a, b = tmp_path / "train.yaml", tmp_path / "test.yaml"
    a.write_text(yaml.safe_dump({"rubric": {"rubric": str(train["rubric"]), "llm": str(train["llm"]),
                                            "human": str(train["human"]), "network": QUICK,
                                            "evaluation": {"seeds": [0, 1], "permutation_resamples": 200}}}))
    b.write_text(yaml.safe_dump({"rubric": {"rubric": str(train["rubric"]), "llm": str(test["llm"]),
                                            "human": str(test["human"])}}))
    return a, b


@pytest.mark.model
@pytest.mark.slow
def test_train_on_one_set_evaluate_on_another(tmp_path: Path) -> None:
    a, b = _configs(tmp_path)
    out = tmp_path / "out" / "transfer.json"
    assert main(["rubric", "evaluate", "--train", str(a), "--test", str(b), "--out", str(out),
                 "--md", str(out.with_suffix(".md")), "--latex", str(out.with_suffix(".tex")), "--quiet",
                 "--threads", "1"]) == 0
    rep = json.loads(out.read_text())
    assert rep["protocol"] == "train/test" and rep["train"]["rows"] == 120
    assert rep["unseen_judges"] == ["newcomer"] and rep["unseen_judge_rows"] == 15
    t1 = rep["table1"]
    assert t1["systems"] == ["random", "llm_argmax", "llm_expected", "calibrated_llm_q0", "network", "oracle",
                             "oracle_without_llm", "oracle_depersonalized", "constant", "judge_mean",
                             "judge_isotonic"]
    assert t1["seeds"] == [0, 1] and t1["rows"] == 60
    assert t1["summary"]["network"]["pearson"]["mean"] > t1["summary"]["random"]["pearson"]["mean"]
    assert "6" in t1["marks"]["rmse"]["oracle"] or "6" in t1["marks"]["pearson"]["oracle"] or \
        t1["summary"]["oracle"]["rmse"]["mean"] <= t1["summary"]["network"]["rmse"]["mean"] + 0.2
    assert all(set(t1["marks"][m]) == set(t1["systems"]) for m in ("rmse", "pearson"))
    md = out.with_suffix(".md").read_text()
    assert "| 6 | LLM-RUBRIC |" in md and "by 1 judge(s) without training annotations" in md
    tex = out.with_suffix(".tex").read_text()
    assert tex.startswith("\\begin{table}") and "LLM-RUBRIC &" in tex and "$\\pm$" in tex


@pytest.mark.model
def test_config_form_and_empty_test_set(tmp_path: Path) -> None:
    a, b = _configs(tmp_path)
    raw = yaml.safe_load(a.read_text())
    test = yaml.safe_load(b.read_text())["rubric"]
    raw["rubric"]["test"] = {"llm": test["llm"], "human": test["human"]}
    raw["rubric"]["evaluation"]["table1"] = False
    cfg = tmp_path / "both.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    out = tmp_path / "t.json"
    assert main(["rubric", "evaluate", "--config", str(cfg), "--out", str(out), "--quiet", "--threads", "1"]) == 0
    assert json.loads(out.read_text())["table1"]["systems"][:4] == ["random", "llm_argmax", "llm_expected", "network"]
    empty = tmp_path / "empty.tsv"
    empty.write_text("round\ttext_id\tDQQ0\tQ1\tQ0\tannotator_id\nr1\tnowhere\t1\t1\t1\tfair\n")
    raw["rubric"]["test"]["human"] = str(empty)
    cfg.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception, match="no annotation has LLM distributions"):
        from autograde.config.rubric import RubricConfig
        from autograde.rubric.stages import run_transfer

        run_transfer(RubricConfig.model_validate(raw["rubric"]), out)
    assert main(["rubric", "evaluate", "--config", str(cfg), "--out", str(out), "--quiet"]) == 2
