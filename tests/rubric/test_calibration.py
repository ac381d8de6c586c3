"""Smooth ECE against the authors' relplot package (golden values), binned ECE, the reliability SVG, baselines."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from support.rubric_data import tiny_tables

from autograde.rubric.baselines import baseline_predictions, isotonic_fit
from autograde.rubric.calibration import binned_ece, reliability_svg, smooth_ece, smooth_ece_sigma
from autograde.rubric.dataset import build_dataset
from autograde.rubric.definition import Rubric


def _cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    f = rng.uniform(0, 1, 2000)
    y = (rng.uniform(0, 1, 2000) < f).astype(float)  # calibrated
    f2 = rng.uniform(0, 1, 1500)
    y2 = (rng.uniform(0, 1, 1500) < 0.5 + 0.5 * (f2 - 0.5)).astype(float)  # overconfident
    f3 = rng.uniform(0, 1, 800) ** 3
    y3 = (rng.uniform(0, 1, 800) < np.clip(f3 * 1.3, 0, 1)).astype(float)  # mostly small, underconfident
    return {"calibrated": (f, y), "overconfident": (f2, y2), "low": (f3, y3)}


# relplot 1.0.3 (Błasiok & Nakkiran's package, default kernel), relplot.smECE(f, y) on the cases above
RELPLOT_SMECE = {"calibrated": 0.025112201743306115, "overconfident": 0.1369249382661093, "low": 0.04718782527347408}


@pytest.mark.parametrize("name", sorted(RELPLOT_SMECE))
def test_smooth_ece_matches_relplot(name: str) -> None:
    f, y = _cases()[name]
    # relplot rounds predictions to a grid and convolves; we evaluate the kernel exactly
    assert smooth_ece(f, y) == pytest.approx(RELPLOT_SMECE[name], abs=2e-3)


def test_smooth_ece_properties() -> None:
    f, y = _cases()["overconfident"]
    value, sigma = smooth_ece(f, y, return_sigma=True)
    assert value == pytest.approx(sigma, abs=2e-3)  # the bandwidth is the fixed point sigma = smECE_sigma
    assert smooth_ece_sigma(f, y, 0.05) > smooth_ece_sigma(f, y, 0.5)  # smoothing more hides more error
    constant = np.full(400, 0.3)
    outcomes = (np.arange(400) % 10 < 3).astype(float)  # exactly 30% happen
    assert smooth_ece(constant, outcomes) < 1e-3
    assert binned_ece(constant, outcomes) == pytest.approx(0.0, abs=1e-12)
    assert binned_ece(np.array([0.9, 0.9]), np.array([0.0, 0.0])) == pytest.approx(0.9)


def test_reliability_svg_is_valid_xml() -> None:
    f, y = _cases()["calibrated"]
    svg = reliability_svg([("Q0 = 1", f[:300], y[:300]), ("Q0 = 2", f[300:600], y[300:600])])
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and root.get("width") == "520"
    assert svg.count("smECE = ") == 2
    assert svg == reliability_svg([("Q0 = 1", f[:300], y[:300]), ("Q0 = 2", f[300:600], y[300:600])])


def test_isotonic_fit_is_monotone_and_averages_ties() -> None:
    x = np.array([1.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 3.0, 1.0, 4.0, 3.0])
    g = isotonic_fit(x, y)
    out = g(np.array([0.0, 1.0, 2.0, 3.0, 3.5, 4.0, 9.0]))
    assert np.all(np.diff(out) >= 0)
    # ties at x=1 average to 2 (weight 2), which violates x=2 (1): pooled (2 * 2 + 1) / 3; then 4 > 3 pools to 3.5
    np.testing.assert_allclose(out, [5 / 3, 5 / 3, 5 / 3, 3.5, 3.5, 3.5, 3.5])


def test_baselines_use_training_rows_only(tiny_rubric: Rubric) -> None:
    llm, human = tiny_tables(30)
    data = build_dataset(tiny_rubric, llm, human)
    train = data.subset(np.flatnonzero(data.judges != "harsh"))
    test = data.subset(np.flatnonzero(data.judges != "fair"))
    got = baseline_predictions(train, test, 0)
    assert set(got) == {"constant", "judge_mean", "llm_argmax", "llm_expected", "judge_isotonic"}
    fan = test.judges == "fan"
    assert np.all(got["judge_mean"][fan] == 4.0) and np.all(got["judge_isotonic"][fan] == 4.0)
    harsh = test.judges == "harsh"  # no training answers: the overall mean, the pooled isotonic fit
    assert np.allclose(got["judge_mean"][harsh], got["constant"][harsh])
    assert np.all(np.isin(got["llm_argmax"], [1.0, 2.0, 3.0, 4.0]))
