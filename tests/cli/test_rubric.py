"""``autograde rubric fit|predict|evaluate|calibrate-qrels`` end to end on hand-made files; errors exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from support.rubric_data import write_tiny_files

from autograde.calibrated.registry import network_kind
from autograde.cli import main
from autograde.config.rubric import RubricConfig
from autograde.core.errors import ConfigError, InputError
from autograde.core.tables import read_table
from autograde.rubric.stages import run_fit

QUICK = {"hidden1": 8, "hidden2": 8, "learning_rate": 0.02, "batch_size": 32, "members": 2, "patience": 5}


def _config(root: Path, files: dict[str, Path], **extra: object) -> Path:
    cfg = root / "experiment.yaml"
    section = {"rubric": str(files["rubric"]), "llm": str(files["llm"]), "human": str(files["human"]),
               "network": QUICK, **extra}
    cfg.write_text(yaml.safe_dump({"rubric": section}))
    return cfg


@pytest.mark.model
def test_fit_predict_evaluate(tmp_path: Path) -> None:
    files = write_tiny_files(tmp_path / "data")
    cfg = _config(tmp_path, files, evaluation={"folds": 3, "seeds": [0, 1], "permutation_resamples": 500})
    model, report = tmp_path / "out" / "model.pt", tmp_path / "out" / "fit.json"
    assert main(["rubric", "fit", "--config", str(cfg), "--model", str(model), "--report", str(report)]) == 0
    doc = json.loads(report.read_text())
    assert doc["judges"] == ["fair", "fan", "harsh"] and doc["rows"] == 120 and len(doc["members"]) == 2

    preds = tmp_path / "out" / "pred.parquet"
    assert main(["rubric", "predict", "--config", str(cfg), "--model", str(model), "--llm", str(files["llm"]),
                 "--judge", "fan", "--judge", "newcomer", "--out", str(preds)]) == 0
    df = read_table(preds)
    assert len(df) == 40 * 2 * 2  # texts x judges x questions
    assert set(df.loc[df["judge"] == "newcomer", "judge_independent"]) == {True}
    assert set(df.loc[df["judge"] == "fan", "judge_independent"]) == {False}
    fan_q0 = df[(df["judge"] == "fan") & (df["question"] == "Q0")]
    assert fan_q0["expected"].min() > 3.5  # the judge who always answers 4
    assert abs(sum(json.loads(fan_q0["probs"].iloc[0]).values()) - 1.0) < 1e-4
    meta = json.loads(pq.read_schema(preds).metadata[b"autograde"])
    assert meta["notes"] == ["judge-independent predictions for unseen judge(s): newcomer"]

    out = tmp_path / "out" / "eval.json"
    assert main(["rubric", "evaluate", "--config", str(cfg), "--out", str(out), "--md", str(out.with_suffix(".md")),
                 "--svg", str(out.with_suffix(".svg")), "--predictions", str(out.with_suffix(".parquet")),
                 "--quiet"]) == 0
    ev = json.loads(out.read_text())
    assert ev["settings"]["seeds"] == [0, 1] and len(ev["per_seed"]) == 2
    assert set(ev["systems"]) == {"network", "constant", "judge_mean", "llm_argmax", "llm_expected", "judge_isotonic",
                                  "random", "calibrated_llm_q0", "oracle", "oracle_without_llm",
                                  "oracle_depersonalized"}
    assert ev["best_baseline"] in {"constant", "judge_mean", "llm_argmax", "llm_expected", "judge_isotonic"}
    assert ev["table1"]["systems"][:8] == ["random", "llm_argmax", "llm_expected", "calibrated_llm_q0", "network",
                                          "oracle", "oracle_without_llm", "oracle_depersonalized"]
    assert ev["summary"]["network"]["Q0"]["pearson"]["mean"] > 0.5
    assert set(ev["calibration"]) == {"1", "2", "3", "4"}
    assert ev["significance"]["per_seed"][0]["squared_error"]["n"] == 120
    md = out.with_suffix(".md").read_text()
    assert "| network |" in md and "smooth ECE" in md and "| 6 | LLM-RUBRIC |" in md
    assert out.with_suffix(".svg").read_text().startswith("<svg")
    table = read_table(out.with_suffix(".parquet"))
    assert set(table["seed"]) == {0, 1} and set(table["question"]) == {"Q0", "Q1"}
    # the same seed gives the same numbers: a second evaluation of seed 0 alone gives seed 0's numbers again
    again = tmp_path / "out" / "again.json"
    assert main(["rubric", "evaluate", "--config", str(cfg), "--seeds", "0", "--out", str(again), "--quiet"]) == 0
    rerun = json.loads(again.read_text())
    assert rerun["per_seed"][0] == ev["per_seed"][0]
    assert rerun["table1"]["per_seed"][0]["scores"] == ev["table1"]["per_seed"][0]["scores"]


def test_renormalized_distributions_are_reported(tmp_path: Path) -> None:
    files = write_tiny_files(tmp_path / "data", n_texts=20)
    lines = files["llm"].read_text().splitlines()
    cells = lines[1].split("\t")
    cells[3:7] = [f"{float(x) * 0.8:.6f}" for x in cells[3:7]]  # first row sums to 0.8
    lines[1] = "\t".join(cells)
    files["llm"].write_text("\n".join(lines) + "\n")
    cfg = RubricConfig.model_validate({"rubric": str(files["rubric"]), "llm": str(files["llm"]),
                                       "human": str(files["human"]),
                                       "network": {**QUICK, "pretrain_epochs": 1, "finetune_epochs": 1}})
    report = run_fit(cfg, tmp_path / "m.pt", tmp_path / "fit.json", network_kind())
    assert report["notes"][0].startswith("renormalized 1 LLM distribution(s) whose probabilities summed to 0.8")


def test_bad_input_exits_2_naming_file_line_and_fix(tmp_path: Path) -> None:
    files = write_tiny_files(tmp_path / "data", n_texts=10)
    with files["human"].open("a") as fh:
        fh.write("r1\tt03\t1\t9\t2\tfair\n")  # Q1 = 9: outside 1..3
    cfg = _config(tmp_path, files)
    model, report = tmp_path / "m.pt", tmp_path / "fit.json"
    assert main(["rubric", "fit", "--config", str(cfg), "--model", str(model), "--report", str(report)]) == 2
    assert not model.exists()
    with pytest.raises(InputError) as exc:
        run_fit(RubricConfig.model_validate(yaml.safe_load(cfg.read_text())["rubric"]), model, report,
                network_kind())
    assert str(exc.value.problems[0]) == (f"{files['human']}:32: text 't03' judge 'fair': answer 9 to Q1 is outside "
                                          "its options (1, 2, 3) (fix: fix the answer, or the options of Q1 in the "
                                          "rubric)")


def test_config_section_errors_name_key_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"rubric": {"llm": "x.tsv", "human": "y.tsv", "network": {"hiden1": 3}}}))
    assert main(["rubric", "evaluate", "--config", str(cfg), "--out", str(tmp_path / "o.json")]) == 2
    from autograde.cli.rubric import _rubric_config

    class Args:
        config = str(cfg)
        rubric = llm = human = texts = seed = seeds = folds = None
        select = False

    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: rubric\.network\.hiden1: unknown key; did you mean 'hidden1'"):
        _rubric_config(Args())


def test_example_config_holds_the_defaults() -> None:
    """config/rubric/example.yaml documents every setting with its default value (it must not drift)."""
    from autograde.config.rubric import CalibratedQrelsConfig

    raw = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "rubric" / "example.yaml").read_text())
    example = RubricConfig.model_validate(raw["rubric"])
    default = RubricConfig.model_validate({"llm": example.llm, "human": example.human})
    assert example.network == default.network and example.selection == default.selection
    assert example.evaluation == default.evaluation
    calibrated = CalibratedQrelsConfig.model_validate(raw["calibrated_qrels"])
    assert calibrated.network == CalibratedQrelsConfig.model_validate({"sources": ["x"], "judgments": "y"}).network
    assert len(calibrated.sources) == 8


def test_workflow_helpers(tmp_path: Path) -> None:
    """What rules/rubric.smk and rule all read from the experiment config."""
    from autograde.calibrated.workflow import calibrated_qrels_files, calibrated_section, calibrated_targets
    from autograde.config.model import Config
    from autograde.rubric.workflow import rubric_predict_sources, rubric_section, rubric_targets

    data = {"data": {"queries": "q.tsv"}, "results_dir": "res"}
    raw = Config.model_validate({**data,
           "rubric": {"llm": "a.tsv", "human": "h.tsv", "predict": ["new/x.tsv", "new/y.parquet"]},
           "calibrated_qrels": {"sources": ["s.qrel"], "judgments": "j.qrel", "output": "expected"}})
    assert rubric_predict_sources(rubric_section(raw)) == {"x": "new/x.tsv", "y": "new/y.parquet"}
    targets = rubric_targets(raw)
    assert "res/rubric/model.pt" in targets and "res/rubric/predictions/y.parquet" in targets
    assert calibrated_qrels_files("res", calibrated_section(raw))["qrels"] == "res/qrels/calibrated/expected-2.qrels"
    assert "res/qrels/calibrated/expected-2.qrels" in calibrated_targets(raw)
    off = Config.model_validate({**data, "rubric": {"enabled": False}, "calibrated_qrels": {"enabled": False}})
    none = Config.model_validate(data)
    assert rubric_targets(off) == [] and rubric_targets(none) == []
    assert calibrated_targets(off) == [] and calibrated_targets(none) == []
    dup = Config.model_validate({**data, "rubric": {"llm": "a", "human": "h", "predict": ["p/x.tsv", "q/x.tsv"]}})
    with pytest.raises(InputError, match="two entries are named 'x'"):
        rubric_predict_sources(rubric_section(dup))


def test_fit_report_records_input_hashes(tmp_path: Path) -> None:
    from autograde.core.ids import file_sha256

    files = write_tiny_files(tmp_path / "data", n_texts=12)
    cfg = RubricConfig.model_validate({"rubric": str(files["rubric"]), "llm": str(files["llm"]),
                                       "human": str(files["human"]), "network": {**QUICK, "pretrain_epochs": 2,
                                                                                 "finetune_epochs": 2}})
    report = run_fit(cfg, tmp_path / "m.pt", tmp_path / "fit.json", network_kind())
    assert report["inputs"]["llm"]["sha256"] == file_sha256(str(files["llm"]))
    assert len(report["settings_hash"]) == 32


def test_rubric_fit_goes_through_the_registry_network_kind(tmp_path: Path) -> None:
    """``rubric fit`` fits the estimator registry's ``network`` kind on the rubric's rows: the model file is the one
    LLM-RUBRIC's training gives for the seed (identical predictions), the report holds the registry document, from
    which ``load_estimator`` reads the same network; a model path without .pt is an error before any training."""
    import numpy as np

    from autograde.calibrated.registry import ESTIMATORS, load_estimator
    from autograde.rubric.stages import load_training_data
    from autograde.rubric.train import fit, load_network

    files = write_tiny_files(tmp_path / "data", n_texts=12)
    cfg = RubricConfig.model_validate({"rubric": str(files["rubric"]), "llm": str(files["llm"]),
                                       "human": str(files["human"]), "seed": 3,
                                       "network": {**QUICK, "pretrain_epochs": 2, "finetune_epochs": 2}})
    assert network_kind() is ESTIMATORS["network"]
    report = run_fit(cfg, tmp_path / "out" / "m.pt", tmp_path / "fit.json", network_kind())
    assert report["estimator"]["kind"] == "network" and report["estimator"]["params"]["seeds"] == [3]
    assert report["estimator"]["state"]["file"] == "m.pt"
    _, data = load_training_data(cfg)
    saved = load_network(tmp_path / "out" / "m.pt").predict_proba(data)
    np.testing.assert_array_equal(saved, fit(data, cfg.network, 3).predict_proba(data))
    loaded = load_estimator(tmp_path / "out", report["estimator"])
    assert np.array_equal(loaded.network_.predict_proba(data), saved)
    with pytest.raises(InputError, match="give the model path a .pt suffix"):
        run_fit(cfg, tmp_path / "m.bin", tmp_path / "fit.json", network_kind())
