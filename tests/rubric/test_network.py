"""The calibration network on hand-made data: NA masks, unseen judges, a judge who always answers 4, seeds (the tests
that train networks are in the model tier)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from support.rubric_data import FAST, TINY_RUBRIC, tiny_tables

from autograde.rubric.dataset import build_dataset, group_folds, prediction_rows
from autograde.rubric.definition import Rubric
from autograde.rubric.network import UNSEEN, CalibrationNetwork, masked_nll
from autograde.rubric.tables import MISSING, Annotation
from autograde.rubric.train import fit, load_network, save_network


def test_masked_nll_ignores_na_entries() -> None:
    logits = torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(0))
    answers = torch.tensor([[0, MISSING], [3, 1], [MISSING, 2]])
    logp = torch.log_softmax(logits, dim=-1)
    by_hand = -(logp[0, 0, 0] + logp[1, 0, 3] + logp[1, 1, 1] + logp[2, 1, 2]) / 4  # present answers only
    logits.requires_grad_(True)
    loss = masked_nll(logits, answers)
    assert torch.allclose(loss, by_hand)
    loss.backward()
    assert torch.count_nonzero(logits.grad[0, 1]) == 0 and torch.count_nonzero(logits.grad[2, 0]) == 0
    assert torch.allclose(masked_nll(logits, answers, [0]), -(logp[0, 0, 0] + logp[1, 0, 3]) / 2)


@pytest.mark.model
def test_na_masking_changes_nothing_for_other_targets(tiny_rubric: Rubric) -> None:
    """A third question that every judge answered NA: the predictions for Q0 and Q1 are unchanged."""
    llm, human = tiny_tables(40)
    with_na = Rubric.model_validate({**TINY_RUBRIC, "inputs": ["Q0", "Q1"], "questions": [
        *TINY_RUBRIC["questions"], {"id": "Q2", "options": [1, 2, 3, 4], "na": True}]})
    human_na = type(human)([Annotation(a.text_id, a.judge, (*a.answers, MISSING), a.path, a.line)
                            for a in human.annotations])
    plain = build_dataset(tiny_rubric, llm, human)
    extended = build_dataset(with_na, llm, human_na)
    p_plain = fit(plain, FAST, seed=3).predict_proba(plain)
    p_ext = fit(extended, FAST, seed=3).predict_proba(extended)
    np.testing.assert_allclose(p_ext[:, :2, :], p_plain, rtol=0, atol=1e-6)


@pytest.mark.model
def test_option_counts_per_question(tiny_rubric: Rubric) -> None:
    llm, human = tiny_tables(20)
    data = build_dataset(tiny_rubric, llm, human)
    probs = fit(data, FAST.model_copy(update={"pretrain_epochs": 3, "finetune_epochs": 3}), 0).predict_proba(data)
    assert probs.shape == (len(data), 2, 4)
    assert np.all(probs[:, 1, 3] == 0.0)  # Q1 has 3 options: the padded 4th gets exactly 0
    np.testing.assert_allclose(probs.sum(axis=2), 1.0, atol=1e-6)


@pytest.mark.model
def test_unseen_judge_gets_judge_independent_prediction(tiny_rubric: Rubric) -> None:
    llm, human = tiny_tables(40)
    data = build_dataset(tiny_rubric, llm, human)
    model = fit(data, FAST, seed=1)
    rows = prediction_rows(tiny_rubric, llm, ["newcomer", "fan"])
    assert model.judges == ("fair", "fan", "harsh")
    assert model.judge_index(np.array(["newcomer", "fan"], dtype=object)).tolist() == [UNSEEN, 1]
    probs = model.predict_proba(rows)
    x = torch.from_numpy(rows.features)
    shared_only = []
    for net in model.members:  # the same networks with the judge-specific weights switched off
        net.personalized = False
        shared_only.append(net.probabilities(x, torch.zeros(len(x), dtype=torch.int64)).detach().double().numpy())
        net.personalized = True
    expected = np.mean(shared_only, axis=0)
    newcomer = rows.judges == "newcomer"
    np.testing.assert_allclose(probs[newcomer], expected[newcomer], atol=1e-6)
    assert not np.allclose(probs[~newcomer], expected[~newcomer], atol=1e-3)  # a known judge is personal


@pytest.mark.model
def test_judge_who_always_answers_4_is_learned(tiny_rubric: Rubric) -> None:
    llm, human = tiny_tables(60)
    data = build_dataset(tiny_rubric, llm, human)
    folds = group_folds(data.groups, 4, seed=0)
    model = fit(data.subset(np.flatnonzero(folds != 0)), FAST, seed=0)
    held_out = data.subset(np.flatnonzero(folds == 0))
    probs = model.predict_proba(held_out)
    fan = held_out.judges == "fan"
    expected_q0 = probs[:, 0, :] @ np.array([1.0, 2.0, 3.0, 4.0])
    assert expected_q0[fan].min() > 3.8, expected_q0[fan]
    assert probs[fan, 0, 3].min() > 0.8
    fair = held_out.judges == "fair"  # the fair judge follows the text's quality: a wide spread
    assert np.ptp(expected_q0[fair]) > 1.5


@pytest.mark.model
def test_same_seed_same_numbers(tiny_rubric: Rubric, tmp_path: Path) -> None:
    llm, human = tiny_tables(30)
    data = build_dataset(tiny_rubric, llm, human)
    a = fit(data, FAST, seed=7)
    b = fit(data, FAST, seed=7)
    c = fit(data, FAST, seed=8)
    pa, pb, pc = a.predict_proba(data), b.predict_proba(data), c.predict_proba(data)
    assert np.array_equal(pa, pb)
    assert [r.__dict__ for r in a.reports] == [r.__dict__ for r in b.reports]
    assert not np.allclose(pa, pc)
    save_network(tmp_path / "m.pt", a)
    assert np.array_equal(load_network(tmp_path / "m.pt").predict_proba(data), pa)


def test_group_folds_keep_groups_together() -> None:
    groups = np.array(["a", "a", "b", "c", "c", "c", "d", "e"], dtype=object)
    folds = group_folds(groups, 2, seed=4)
    for g in set(groups.tolist()):
        assert len(set(folds[groups == g].tolist())) == 1
    assert np.array_equal(folds, group_folds(groups[::-1], 2, seed=4)[::-1])  # independent of row order


def test_paper_initialisation_is_standard_normal() -> None:
    net = CalibrationNetwork(10, 3, [4, 3], 25, 25, torch.Generator().manual_seed(0), init="paper")
    assert 0.9 < float(net.W1a.detach().std()) < 1.1  # the released code: every weight N(0, 1)
    scaled = CalibrationNetwork(10, 3, [4, 3], 25, 25, torch.Generator().manual_seed(0))
    assert float(scaled.W1a.detach().abs().max()) == 0.0  # judge-specific weights start at the shared network
