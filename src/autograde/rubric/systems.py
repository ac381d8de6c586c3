"""The systems of LLM-RUBRIC's Table 1 (Hashemi et al., ACL 2024), each trained on one set of annotations and predicting the main
question of another: the baselines, LLM-RUBRIC, and the oracle with its ablations.

=========================  ==========================================================================================
``random``                 1: a uniformly random answer per annotation (seeded)
``llm_argmax``             2: the value of the LLM's most probable main-question answer
``llm_expected``           3: the expected value of the LLM's main-question distribution
``calibrated_llm_q0``      4: the network with the LLM's main-question distribution as its only input
``network``                6: LLM-RUBRIC (every input question's distribution; judge-specific weights)
``oracle``                 a: the network with the judge's own answers to the other questions (one-hot) added to
                           the input, at training and at test time
``oracle_without_llm``     b: the oracle without the LLM's distributions (the judge's answers only)
``oracle_depersonalized``  c: the oracle without judge-specific weights
``constant``,              more baselines (:mod:`autograde.rubric.baselines`): training mean, the judge's training
``judge_mean``,            mean, a per-judge isotonic map of the LLM's expected answer
``judge_isotonic``
=========================  ==========================================================================================

Row 5 of the paper (FActScore) needs a retrieval corpus and is not reproduced. The oracle networks learn the main
question only (the other questions are their input).
"""

from __future__ import annotations

import numpy as np

from autograde.config.rubric import Hyperparameters
from autograde.rubric.baselines import baseline_predictions
from autograde.rubric.dataset import CalibrationData, expected_values
from autograde.rubric.tables import MISSING
from autograde.rubric.train import fit

__all__ = ["LABELS", "NETWORK_SYSTEMS", "TABLE1", "main_truth", "oracle_data", "q0_only_data", "system_predictions"]

TABLE1: tuple[str, ...] = ("random", "llm_argmax", "llm_expected", "calibrated_llm_q0", "network", "oracle",
                           "oracle_without_llm", "oracle_depersonalized")
NETWORK_SYSTEMS: tuple[str, ...] = ("network", "calibrated_llm_q0", "oracle", "oracle_without_llm",
                                    "oracle_depersonalized")
LABELS: dict[str, tuple[str, str]] = {
    "random": ("1", "Random"), "llm_argmax": ("2", "Argmax LLM Q0"), "llm_expected": ("3", "Expected LLM Q0"),
    "calibrated_llm_q0": ("4", "Calibrated LLM Q0"), "network": ("6", "LLM-RUBRIC"),
    "oracle": ("a", "Oracle (judge's answers to the other questions)"),
    "oracle_without_llm": ("b", "Oracle w/o LLM probs"),
    "oracle_depersonalized": ("c", "Oracle w/o personalized calibration"),
    "constant": ("", "constant (training mean)"), "judge_mean": ("", "judge mean (judge's training mean)"),
    "judge_isotonic": ("", "judge isotonic (per-judge isotonic map of the LLM's expected answer)"),
}
"""system -> (the paper's row mark, its name)."""


def q0_only_data(data: CalibrationData) -> CalibrationData:
    """``data`` with the main question's LLM distribution as the only input features."""
    cols = [i for i, n in enumerate(data.feature_names) if n.rsplit("=", 1)[0] == data.main]
    return CalibrationData(data.text_ids, data.judges, data.groups, data.features[:, cols], data.answers,
                           data.questions, data.option_values, data.main,
                           tuple(data.feature_names[i] for i in cols), data.notes, data.sessions)


def oracle_data(data: CalibrationData, with_llm: bool = True) -> CalibrationData:
    """The main question alone, with the judge's answers to every other question as one-hot input features
    (a missing or NA answer: all zeros), after the LLM's distributions when ``with_llm``."""
    blocks, names = [], []
    if with_llm:
        blocks.append(data.features.astype(np.float32))
        names += list(data.feature_names)
    for q, qid in enumerate(data.questions):
        if qid == data.main:
            continue
        a = data.answers[:, q]
        for k, v in enumerate(data.option_values[q]):
            blocks.append((a == k).astype(np.float32).reshape(-1, 1))
            names.append(f"answer {qid}={v:g}")
    q = data.main_index
    return CalibrationData(data.text_ids, data.judges, data.groups, np.concatenate(blocks, axis=1),
                           data.answers[:, [q]], (data.main,), (data.option_values[q],), data.main, tuple(names),
                           data.notes, data.sessions)


def _network_view(system: str, data: CalibrationData) -> CalibrationData:
    if system == "calibrated_llm_q0":
        return q0_only_data(data)
    if system in ("oracle", "oracle_depersonalized"):
        return oracle_data(data, with_llm=True)
    if system == "oracle_without_llm":
        return oracle_data(data, with_llm=False)
    return data


def _network_main(system: str, train: CalibrationData, test: CalibrationData, hp: Hyperparameters, seed: int
                  ) -> np.ndarray:
    """Expected main-question answer of ``test`` from the network ``system`` trained on ``train``."""
    if system == "oracle_depersonalized":
        hp = hp.model_copy(update={"personalized": False})
    tr, te = _network_view(system, train), _network_view(system, test)
    probs = fit(tr, hp, seed).predict_proba(te)
    return expected_values(probs, te.option_values)[:, te.main_index]


def system_predictions(train: CalibrationData, test: CalibrationData, hp: Hyperparameters, seed: int,
                       systems: tuple[str, ...] = TABLE1, network_probs: np.ndarray | None = None
                       ) -> dict[str, np.ndarray]:
    """Every system's predicted main-question value for the ``test`` rows (baselines fitted on ``train``).

    ``network_probs`` (test rows x questions x options), when given, is LLM-RUBRIC's prediction already made
    (so the network is not fitted twice).
    """
    q = train.main_index
    out: dict[str, np.ndarray] = {}
    values = np.asarray(test.option_values[q], dtype=np.float64)
    for system in systems:
        if system == "random":
            out[system] = values[np.random.default_rng([seed, 7]).integers(0, len(values), len(test))]
        elif system == "network" and network_probs is not None:
            out[system] = expected_values(network_probs, test.option_values)[:, q]
        elif system in NETWORK_SYSTEMS:
            out[system] = _network_main(system, train, test, hp, seed)
    baselines = baseline_predictions(train, test, q)
    for name in ("llm_argmax", "llm_expected", "constant", "judge_mean", "judge_isotonic"):
        if name in baselines:
            out[name] = baselines[name]
    return out


def main_truth(data: CalibrationData) -> np.ndarray:
    """The judges' main-question answer values (NaN where missing)."""
    q = data.main_index
    truth = data.values_of(q)
    truth[data.answers[:, q] == MISSING] = np.nan
    return truth
