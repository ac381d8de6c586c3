"""Calibrated relevance labels from several graders: hand-made qrels, the grades-table features, per-level
thresholds, the DL20 cross-validation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.calibrated_data import FAST, tiny_sources

from autograde.calibrated.cv import cross_validate_qrels
from autograde.calibrated.features import features_from_sources
from autograde.calibrated.thresholds import threshold_labels, tune_thresholds
from autograde.cli import main
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.errors import InputError
from autograde.core.tables import write_table
from autograde.io.trec import read_qrels


@pytest.mark.model
def test_tiny_calibrated_qrels(tmp_path: Path) -> None:
    f = tiny_sources(tmp_path / "data")
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(f["close"]), str(f["binary"]), str(f["random"])],
                                                "judgments": str(f["judgments"]), "folds": 4, **FAST})
    features = features_from_sources(cfg.sources, cfg)
    assert features.matrix.shape == (96, 4 + 2 + 3)  # one-hot of each source's labels
    assert features.names[:4] == ["close=0", "close=1", "close=2", "close=3"]
    qrels, report, table = cross_validate_qrels(cfg, features, read_qrels(f["judgments"]))
    assert sum(len(d) for d in qrels.values()) == 96  # judged and unjudged passages alike
    assert {v for d in qrels.values() for v in d.values()} == {0, 1, 2, 3}  # every level is used
    assert report["judged"] == 88 and len(report["per_fold"]) == 4
    assert sum(pf["queries"] for pf in report["per_fold"]) == 8
    assert report["overall"]["kappa"] > 0.5
    per = report["overall"]["per_estimator"]
    assert {"logistic C=1", "network", "calibrated (selected)", "close (single source)"} <= set(per)
    assert all(len(pf["thresholds"]) == 3 for pf in report["per_fold"])  # one threshold per level above 0
    assert all(pf["selected"] == "mean of logistic C=1, network" for pf in report["per_fold"])
    assert set(report["label_shares"]) == {"judged", "labels_of_judged", "labels_of_all"}
    for lv in "0123":  # each fold's deployed model keeps every level in the band on its own training passages
        assert 1 / 1.5 <= report["share_ratios"]["training_min"][lv] <= report["share_ratios"]["training_max"][lv] \
            <= 1.5
    assert table["judgment"].isna().sum() == 8
    # every passage of a query comes from one fold's model (the model that never saw the query)
    assert table.groupby("query_id")["fold"].nunique().max() == 1
    expected = cfg.model_copy(update={"output": "expected", "estimators": ["logistic"]})  # the output mode only
    q_exp, _, t_exp = cross_validate_qrels(expected, features, read_qrels(f["judgments"]))
    levels = np.array([0, 1, 2, 3])
    probs = t_exp[[f"p_level_{v}" for v in levels]].to_numpy()
    assert list(t_exp["label"]) == list(np.rint(probs @ levels).astype(int))
    np.testing.assert_allclose(t_exp["expected"], probs @ levels)


def test_per_level_thresholds_assign_the_top_level() -> None:
    """A model that is never sure of level 3 still labels 3 where P(level >= 3) passes its own threshold.

    Rows: P(level) with the top level's probability at most 0.4; truth: level 3 exactly where that is 0.4.
    One threshold for every level (the old behaviour) would never reach 3; per-level thresholds do.
    """
    probs = np.array([[0.7, 0.2, 0.1, 0.0], [0.1, 0.6, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.0, 0.2, 0.4, 0.4],
                      [0.6, 0.3, 0.1, 0.0], [0.2, 0.2, 0.5, 0.1]])
    truth = np.array([0, 1, 3, 3, 0, 2])
    taus = tune_thresholds(probs, truth)
    assert threshold_labels(probs, taus).tolist() == truth.tolist()
    assert taus[2] <= 0.4


def test_features_from_grades_tables(tmp_path: Path) -> None:
    """A direct grader (grade + distribution) and a bank grader (max grade + share of items >= 4)."""
    direct = pd.DataFrame({"query_id": ["q1", "q1"], "passage_id": ["a", "b"], "item_id": ["q1/query"] * 2,
                           "grader": ["sun"] * 2, "grade": [1, 0],
                           "grade_probs": [json.dumps({"0": 0.3, "1": 0.7}), json.dumps({"0": 0.9, "1": 0.1})]})
    bank = pd.DataFrame({"query_id": ["q1"] * 4, "passage_id": ["a", "a", "b", "b"],
                         "item_id": ["q1/x", "q1/y", "q1/x", "q1/y"], "grader": ["exam"] * 4, "grade": [5, 4, 2, 0],
                         "grade_probs": [None] * 4})
    write_table(tmp_path / "direct.parquet", direct)
    write_table(tmp_path / "bank.parquet", bank)
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(tmp_path / "direct.parquet"),
                                                            str(tmp_path / "bank.parquet")], "judgments": "x"})
    feats = features_from_sources(cfg.sources, cfg)
    assert feats.keys == [("q1", "a"), ("q1", "b")]
    assert feats.names == ["sun=0", "sun=1", "sun:p(0)", "sun:p(1)", "exam=2", "exam=5", "exam:share>=4"]
    np.testing.assert_allclose(feats.matrix, [[0, 1, 0.3, 0.7, 0, 1, 1.0], [1, 0, 0.9, 0.1, 1, 0, 0.0]], atol=1e-6)
    assert [e.name for e in feats.encodings] == ["sun", "exam"] and feats.encodings[1].extra == ("exam:share>=4",)


def test_bad_sources(tmp_path: Path) -> None:
    f = tiny_sources(tmp_path)
    bad = tmp_path / "bad.qrel"
    bad.write_text("q1 0 d1 1\nq1 0 d2 high\n")
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(bad), str(tmp_path / "none.qrel")],
                                                "judgments": str(f["judgments"])})
    with pytest.raises(InputError) as exc:
        features_from_sources(cfg.sources, cfg)
    msgs = [str(p) for p in exc.value.problems]
    assert msgs[0].startswith(f"{bad}:2: relevance grade 'high' is not an integer")
    assert msgs[1].startswith(f"{tmp_path / 'none.qrel'}: file not found")


def test_calibrate_qrels_cli(tmp_path: Path) -> None:
    """The command end to end (the regression alone: the network's determinism is tests/rubric/test_network.py's)."""
    f = tiny_sources(tmp_path / "data")
    cfg = tmp_path / "c.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump({"calibrated_qrels": {"judgments": str(f["judgments"]), "folds": 4, **FAST,
                                                        "estimators": ["logistic"]}}))
    out = tmp_path / "o.qrels"
    args = ["rubric", "calibrate-qrels", "cross-validate", "--config", str(cfg), "--source", str(f["close"]), "--source",
            str(f["binary"]), "--out", str(out), "--report", str(tmp_path / "r.json"), "--quiet"]
    assert main(args) == 0
    first = out.read_bytes()
    assert main(args) == 0
    assert out.read_bytes() == first  # a rerun writes identical bytes
    assert main([*args[:-1], "--output", "probability", "--quiet"]) == 0
    assert max(v for d in read_qrels(out).values() for v in d.values()) <= 100
