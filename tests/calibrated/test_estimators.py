"""The estimator contract and its registry, the deployed mean of the candidates, and cross-fitted thresholds that keep the level
shares on the deployed model (the network refitted on every passage once broke them)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import numpy as np
import pytest
from support.calibrated_data import UNDERFIT, skewed_sources, tiny_sources

from autograde.calibrated.estimators import LogisticEstimator, NetworkEstimator, OrdinalLogisticEstimator
from autograde.calibrated.features import features_from_sources
from autograde.calibrated.fit import fit_calibrated, training_rows
from autograde.calibrated.model import load_calibrated_model
from autograde.calibrated.registry import (
    ESTIMATORS,
    CrossFitted,
    GroupSplit,
    MeanEstimator,
    load_estimator,
    save_estimator,
)
from autograde.calibrated.thresholds import (
    SHARE_FACTOR,
    cross_fitted_thresholds,
    deployed_thresholds,
    label_shares,
    threshold_labels,
    tune_thresholds,
)
from autograde.config.rubric import CalibratedQrelsConfig, EstimatorKind, Hyperparameters
from autograde.io.trec import read_qrels


def _level_ratios(labels: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """Labelled share / judged share of every level (level indices)."""
    return np.bincount(labels, minlength=4) / np.bincount(answers, minlength=4)


def test_every_configured_kind_is_registered_and_follows_the_contract(tmp_path: Path) -> None:
    """One registry: every kind the config accepts; parameters are the constructor's, learned attributes end in
    '_', fit takes no groups (the split is a parameter), and a saved estimator loads with identical predictions."""
    assert set(get_args(EstimatorKind)) <= set(ESTIMATORS)
    cfg = CalibratedQrelsConfig.model_validate({"sources": ["a"], "judgments": "b", "logistic_c": [0.5, 2.0],
                                                "estimators": list(get_args(EstimatorKind))})
    made = [e for kind in cfg.estimators for e in ESTIMATORS[kind].from_config(cfg, 4)]
    assert [e.name for e in made] == ["network", "ensemble of 5", "logistic C=0.5", "logistic C=2",
                                      "ordinal_logistic C=0.5", "ordinal_logistic C=2"]
    assert made[1].get_params()["seeds"] == (0, 1, 2, 3, 4)
    est = LogisticEstimator(4, c=0.5)
    assert est.get_params() == {"n_levels": 4, "c": 0.5} and est.set_params(c=2.0).c == 2.0
    f = tiny_sources(tmp_path / "data")
    qcfg = CalibratedQrelsConfig.model_validate({"sources": [str(f["close"]), str(f["binary"])],
                                                 "judgments": str(f["judgments"])})
    features = features_from_sources(qcfg.sources, qcfg)
    rows = training_rows(features, read_qrels(f["judgments"]), [0, 1, 2, 3], "j")
    x, y = features.matrix[rows.rows], rows.answers
    split = GroupSplit.of(rows.groups, 3, 0)
    for est in (LogisticEstimator(4), OrdinalLogisticEstimator(4)):
        fitted = CrossFitted(est, split).fit(x, y)
        assert len(fitted.estimators_) == 3 and fitted.oof_proba_ is not None
        for (_, test), fold_model in zip(split.split(), fitted.estimators_, strict=True):  # out of fold: the
            np.testing.assert_array_equal(fitted.oof_proba_[test], fold_model.predict_proba(x[test]))  # other folds'
        assert fitted.clone().estimators_ == [] and fitted.clone().get_params()["split"] is split
        loaded = load_estimator(tmp_path, save_estimator(fitted, tmp_path))
        assert np.array_equal(loaded.predict_proba(features.matrix), fitted.predict_proba(features.matrix))
        assert loaded.name == fitted.name == est.name


def test_the_deployed_model_is_the_mean_of_the_candidates_equal_per_kind(tmp_path: Path) -> None:
    """No candidate is selected: the deployed model is the mean of every candidate's cross-fitted probabilities,
    equal weight per kind (shared among a kind's C values), the same as cross-fitting the mean itself; its
    thresholds are cross-fitted on its own out-of-fold predictions and keep the band on the training passages;
    it saves and loads with identical predictions; another seed deploys the same kind of model."""
    f = skewed_sources(tmp_path)
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(f[g]) for g in "abc"],
                                                "judgments": str(f["judgments"]), "logistic_c": [0.1, 1.0],
                                                "estimators": ["ordinal_logistic", "logistic"], "selection_folds": 4})
    features = features_from_sources(cfg.sources, cfg)
    judgments = read_qrels(f["judgments"])
    result = fit_calibrated(cfg, features, judgments)
    names = ["ordinal_logistic C=0.1", "ordinal_logistic C=1", "logistic C=0.1", "logistic C=1"]
    mean_name = "mean of " + ", ".join(names)
    assert [r["estimator"] for r in result.selection] == [*names, mean_name]
    assert [r["estimator"] for r in result.selection if r.get("selected")] == [mean_name]
    assert result.selection[-1]["weights"] == dict.fromkeys(names, 0.25) and list(result.candidates) == names
    model = result.model
    assert isinstance(model.estimator, CrossFitted) and model.estimator.name == mean_name
    rows = training_rows(features, judgments, [0, 1, 2, 3], "j")
    x, y = features.matrix[rows.rows], rows.answers
    members = [c.estimator for c in result.candidates.values()]
    oof = model.estimator.oof_proba_
    assert oof is not None and all(m.oof_proba_ is not None for m in members)
    np.testing.assert_allclose(oof, np.mean([m.oof_proba_ for m in members], axis=0))
    np.testing.assert_allclose(model.predict_proba(features.matrix),
                               np.mean([m.predict_proba(features.matrix) for m in members], axis=0))
    split = GroupSplit.of(rows.groups, 4, [0, 2])  # the fit's inner split
    direct = CrossFitted(MeanEstimator([m.estimator for m in members], (0.25,) * 4), split).fit(x, y)
    assert direct.oof_proba_ is not None
    np.testing.assert_allclose(direct.oof_proba_, oof)
    th = cross_fitted_thresholds(oof, model.predict_proba(x), y)
    assert model.thresholds == th.deployed == tuple(result.selection[-1]["deployed_thresholds"])
    ratios = _level_ratios(model.labels(model.predict_proba(x)), y)
    assert np.all((ratios >= 1 / SHARE_FACTOR) & (ratios <= SHARE_FACTOR)), ratios
    model.save(tmp_path / "model")
    loaded = load_calibrated_model(tmp_path / "model")
    assert loaded.estimator.name == mean_name and loaded.thresholds == model.thresholds
    assert np.array_equal(loaded.predict_proba(features.matrix), model.predict_proba(features.matrix))
    other = fit_calibrated(cfg.model_copy(update={"seed": 3}), features, judgments).model
    assert other.estimator.name == mean_name
    alone = fit_calibrated(cfg.model_copy(update={"estimators": ["logistic"], "logistic_c": [1.0]}), features,
                           judgments)
    assert alone.model.estimator.name == "logistic C=1" and [r.get("selected") for r in alone.selection] == [True]


def test_deployed_thresholds_keep_the_shares_on_another_scale() -> None:
    """The deployed model's probabilities are on another scale than the fold models' (leaning to higher levels): the
    thresholds tuned on the ones, applied to the others, put levels out of the band; the deployed thresholds bring
    those levels back to the tuned share; on the same scale they are the tuned thresholds."""
    rng = np.random.default_rng(0)
    answers = rng.choice(4, 2000, p=[0.55, 0.25, 0.12, 0.08])
    logits = np.eye(4)[answers] * 2.0 + rng.normal(0, 1.0, (2000, 4))
    oof = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    shifted = logits + np.array([0.0, 0.3, 0.6, 1.2])  # the deployed model leans to the higher levels
    sharper = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    tuned = tune_thresholds(oof, answers)
    oof_labels = threshold_labels(oof, tuned)
    assert np.all(np.abs(np.log(_level_ratios(oof_labels, answers))) <= np.log(SHARE_FACTOR))
    moved = _level_ratios(threshold_labels(sharper, tuned), answers)
    assert np.any(np.abs(np.log(moved)) > np.log(SHARE_FACTOR)), moved
    th = cross_fitted_thresholds(oof, sharper, answers)
    assert th.tuned == tuned
    ratios = _level_ratios(th.deployed_labels, answers)
    assert np.all(np.abs(np.log(ratios)) <= np.log(SHARE_FACTOR)), ratios
    top = label_shares(th.deployed_labels, 4)[2]  # level 3 was out of the band: back at its tuned share
    assert top == pytest.approx(label_shares(oof_labels, 4)[2], abs=2e-3)
    judged = np.bincount(answers) / len(answers)
    assert deployed_thresholds(oof, tuned, label_shares(oof_labels, 4), judged) == tuned


@pytest.mark.model
def test_thresholds_hold_their_band_on_the_deployed_network(tmp_path: Path) -> None:
    """The violation: thresholds tuned on the out-of-fold predictions of a network's fold models, applied to the
    network refitted on every passage, labelled a level far outside 1.5x its judged share (on DL20: 15.2% level
    3 against 5.7% judged). Reproduced here on a small collection; the fit now keeps every level in the band on
    the training passages, for the deployed model."""
    f = skewed_sources(tmp_path)
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(f[g]) for g in "abc"], "judgments": str(f["judgments"]),
                                                "estimators": ["network"], "network": UNDERFIT,
                                                "selection_folds": 4})
    features = features_from_sources(cfg.sources, cfg)
    judgments = read_qrels(f["judgments"])
    rows = training_rows(features, judgments, [0, 1, 2, 3], "j")
    x, y = features.matrix[rows.rows], rows.answers
    hp = Hyperparameters.model_validate(UNDERFIT)
    folds = CrossFitted(NetworkEstimator(4, hp, (0,)), GroupSplit.of(rows.groups, 4, [0, 2])).fit(x, y)
    assert folds.oof_proba_ is not None
    tuned = tune_thresholds(folds.oof_proba_, y)
    refit = NetworkEstimator(4, hp, (0,)).fit(x, y)
    old = _level_ratios(threshold_labels(refit.predict_proba(x), tuned), y)
    assert np.any((old < 1 / SHARE_FACTOR) | (old > SHARE_FACTOR)), old  # the violation, reproduced
    model = fit_calibrated(cfg, features, judgments).model
    new = _level_ratios(model.labels(model.predict_proba(x)), y)  # level values are the indices here
    assert np.all((new >= 1 / SHARE_FACTOR) & (new <= SHARE_FACTOR)), new
    shares = model.info["training"]["label_shares"]
    assert shares["deployed"] == {str(lv): float(np.mean(model.labels(model.predict_proba(x)) == lv))
                                  for lv in range(4)}


def test_cuts_lie_between_predicted_values_so_last_bits_keep_the_labels() -> None:
    """Tuned and deployed thresholds cut halfway between distinct values of P(level >= L), never on one: the same
    probabilities as another process computes them (differing in the last bits) get the same labels. A cut on a
    value flipped a whole tie group (a saved model applied in a fresh process labelled one fold differently)."""
    rng = np.random.default_rng(3)
    answers = rng.choice(4, 3000, p=[0.55, 0.25, 0.12, 0.08])
    logits = np.eye(4)[answers] * 1.5 + rng.normal(0, 1.0, (3000, 4))
    probs = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 2)  # tie groups
    probs[:, 0] = 1.0 - probs[:, 1:].sum(axis=1)
    shifted = np.round(probs ** 0.7 / (probs ** 0.7).sum(axis=1, keepdims=True), 2)  # another scale: moved cuts
    shifted[:, 0] = 1.0 - shifted[:, 1:].sum(axis=1)
    th = cross_fitted_thresholds(probs, shifted, answers)
    assert th.deployed != th.tuned  # the move was exercised
    for p, taus in ((probs, th.tuned), (shifted, th.deployed)):
        tail = np.cumsum(p[:, ::-1], axis=1)[:, ::-1][:, 1:]
        gap = np.abs(tail[:, :, None] - np.array(taus)[None, None, :]).min(axis=(0, 1))
        assert np.all(gap >= 1e-3), (taus, gap)  # the values are 0.01 apart: every cut in a gap
        for sign in (-1, 1):
            last_bits = p * (1 + sign * 4 * np.finfo(float).eps)
            assert np.array_equal(threshold_labels(last_bits, taus), threshold_labels(p, taus))
