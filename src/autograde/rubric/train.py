"""Training the calibration network: multi-task pre-training, fine-tuning on the main task, early stopping.

Both phases minimise the mean negative log-likelihood of the present answers (NA and missing masked) with
Adam; the paper's "regularized by early stopping" is taken literally: after every epoch the loss on held-out
texts (all questions while pre-training, the main question while fine-tuning) is measured, and a phase ends
after ``patience`` epochs without improvement, keeping the best epoch's weights. The released code had no
early stopping (fixed epoch counts from a grid) and a seed-dependent result; here every member of a small
ensemble holds out a different inner fold of texts and the members' distributions are averaged.

Determinism: every random draw comes from generators seeded by ``seed`` (weights from a torch.Generator,
batch order and inner folds from numpy), and training runs under ``torch.use_deterministic_algorithms``:
the same data, hyperparameters and seed give the same numbers on the same machine.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from autograde.config.rubric import Hyperparameters
from autograde.core.log import progress
from autograde.core.text import atomic_write_bytes
from autograde.rubric.dataset import CalibrationData, group_folds
from autograde.rubric.network import UNSEEN, CalibrationNetwork, masked_nll

__all__ = ["FittedModel", "deterministic", "fit", "load_network", "save_network"]

NETWORK_FORMAT_VERSION = 1


@contextmanager
def deterministic() -> Iterator[None]:
    """Deterministic torch kernels for the duration (the previous setting is restored)."""
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous)


@dataclass
class MemberReport:
    pretrain_epochs: int
    finetune_epochs: int
    pretrain_loss: float
    finetune_loss: float


@dataclass
class FittedModel:
    """An ensemble of trained networks with what is needed to predict: judges, questions, options."""

    members: list[CalibrationNetwork]
    judges: tuple[str, ...]
    questions: tuple[str, ...]
    option_values: tuple[tuple[float, ...], ...]
    main: str
    feature_names: tuple[str, ...]
    hyperparameters: Hyperparameters
    seed: int
    reports: list[MemberReport] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    def judge_index(self, judges: np.ndarray) -> np.ndarray:
        """Index of each judge (UNSEEN for judges without judge-specific weights)."""
        index = {j: i for i, j in enumerate(self.judges)}
        return np.array([index.get(j, UNSEEN) for j in judges], dtype=np.int64)

    @torch.no_grad()
    def predict_proba(self, data: CalibrationData) -> np.ndarray:
        """Mean of the members' distributions: rows x questions x options (0 past a question's options)."""
        if tuple(data.feature_names) != tuple(self.feature_names):
            from autograde.core.errors import Problems

            problems = Problems()
            problems.add("rubric", None, f"the input features ({', '.join(data.feature_names[:6])}, ...; "
                         f"{len(data.feature_names)}) differ from the model's ({', '.join(self.feature_names[:6])}, "
                         f"...; {len(self.feature_names)})", "predict with the rubric the model was fitted with")
            problems.raise_if_any()
        x = torch.from_numpy(np.ascontiguousarray(data.features, dtype=np.float32))
        j = torch.from_numpy(self.judge_index(data.judges))
        with deterministic():
            probs = [m.eval().probabilities(x, j).double().numpy() for m in self.members]
        return np.mean(probs, axis=0)


def _batches(n: int, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


def _tensors(data: CalibrationData, judge_index: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = torch.from_numpy(np.ascontiguousarray(data.features, dtype=np.float32))
    j = torch.tensor([judge_index.get(a, UNSEEN) for a in data.judges], dtype=torch.int64)
    y = torch.from_numpy(np.ascontiguousarray(data.answers, dtype=np.int64))
    return x, j, y


def _phase(net: CalibrationNetwork, opt: torch.optim.Optimizer, train: tuple[torch.Tensor, ...],
           val: tuple[torch.Tensor, ...] | None, questions: list[int] | None, epochs: int, hp: Hyperparameters,
           rng: np.random.Generator) -> tuple[int, float]:
    """Train for at most ``epochs``; with ``val``, stop early and restore the best epoch. -> (epochs, val loss)."""
    x, j, y = train
    best_loss, best_epoch, best_state = float("inf"), 0, None
    if val is not None:
        with torch.no_grad():
            best_loss = float(masked_nll(net(val[0], val[1]), val[2], questions))
        best_state = copy.deepcopy(net.state_dict())
    for epoch in range(1, epochs + 1):
        net.train()
        for idx in _batches(len(y), hp.batch_size, rng):
            b = torch.from_numpy(idx)
            loss = masked_nll(net(x[b], j[b]), y[b], questions)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if val is None:
            continue
        with torch.no_grad():
            current = float(masked_nll(net(val[0], val[1]), val[2], questions))
        if current < best_loss - 1e-6:
            best_loss, best_epoch, best_state = current, epoch, copy.deepcopy(net.state_dict())
        elif epoch - best_epoch >= hp.patience:
            break
    if best_state is not None:
        net.load_state_dict(best_state)
        return best_epoch, best_loss
    return epochs, float("nan")


def _fit_member(data: CalibrationData, train_rows: np.ndarray, val_rows: np.ndarray | None,
                judge_index: dict[str, int], hp: Hyperparameters, seed: int) -> tuple[CalibrationNetwork, MemberReport]:
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = CalibrationNetwork(data.features.shape[1], len(judge_index), data.option_counts, hp.hidden1, hp.hidden2,
                             gen, hp.init, hp.personalized)
    # the judge-specific L2 penalty judge_l2 * |W^a|^2 enters as Adam weight decay 2 * judge_l2 (same gradient,
    # fewer autograd operations per step)
    personal = {id(p) for p in net.personal_parameters()}
    groups: list[dict[str, Any]] = [{"params": [p for p in net.parameters() if id(p) not in personal]},
                                    {"params": net.personal_parameters(), "weight_decay": 2.0 * hp.judge_l2 if hp.personalized else 0.0}]
    opt = torch.optim.Adam(groups, lr=hp.learning_rate, foreach=True)
    train = _tensors(data.subset(train_rows), judge_index)
    val = _tensors(data.subset(val_rows), judge_index) if val_rows is not None and len(val_rows) else None
    pre_epochs, pre_loss = _phase(net, opt, train, val, None, hp.pretrain_epochs, hp, rng)
    fine_epochs, fine_loss = _phase(net, opt, train, val, [data.main_index], hp.finetune_epochs, hp, rng)
    return net.eval(), MemberReport(pre_epochs, fine_epochs, pre_loss, fine_loss)


def fit(data: CalibrationData, hp: Hyperparameters, seed: int = 0) -> FittedModel:
    """Train the ensemble on ``data`` (judges = those of ``data``); deterministic for a given ``seed``.

    With ``members = m > 1`` the groups are dealt into ``m`` inner folds and member i holds out fold i for
    early stopping; with one member a ``validation_fraction`` of the groups is held out. Without early
    stopping every member trains on every row for exactly the configured epochs (members differ by seed).
    """
    if len(data) == 0:
        from autograde.core.errors import Problems

        problems = Problems()
        problems.add("training data", None, "no annotations to train on",
                     "check that the human table's text ids match the LLM table's")
        problems.raise_if_any()
    if hp.seeds > 1:  # a seed ensemble: every seed's members, averaged together
        parts = [fit(data, hp.model_copy(update={"seeds": 1}), s) for s in range(seed, seed + hp.seeds)]
        first = parts[0]
        return FittedModel([m for p in parts for m in p.members], first.judges, first.questions, first.option_values,
                           first.main, first.feature_names, hp, seed, [r for p in parts for r in p.reports],
                           first.notes)
    judges = tuple(sorted(set(data.judges.tolist())))
    judge_index = {a: i for i, a in enumerate(judges)}
    members, reports = [], []
    splits: list[tuple[np.ndarray, np.ndarray | None]]  # (training rows, early-stopping rows or None)
    with deterministic():
        if not hp.early_stopping:
            all_rows = np.arange(len(data))
            splits = [(all_rows, None) for _ in range(hp.members)]
        elif hp.members > 1:
            folds = group_folds(data.groups, hp.members, [seed, 1])
            splits = [(np.flatnonzero(folds != m), np.flatnonzero(folds == m)) for m in range(hp.members)]
        else:
            k = max(2, round(1.0 / hp.validation_fraction))
            folds = group_folds(data.groups, k, [seed, 1])
            splits = [(np.flatnonzero(folds != 0), np.flatnonzero(folds == 0))]
        for m, (train_rows, val_rows) in enumerate(progress(splits, desc=f"training the network (seed {seed})",
                                                            unit="members")):
            net, report = _fit_member(data, train_rows, val_rows, judge_index, hp, seed * 1000 + m)
            members.append(net)
            reports.append(report)
    return FittedModel(members, judges, data.questions, data.option_values, data.main, data.feature_names, hp, seed,
                       reports, data.notes)


def save_network(path: str | Path, model: FittedModel) -> None:
    """One file: the members' weights and a JSON header (judges, questions, options, hyperparameters)."""
    meta = {
        "format_version": NETWORK_FORMAT_VERSION, "judges": list(model.judges), "questions": list(model.questions),
        "option_values": [list(v) for v in model.option_values], "main": model.main,
        "feature_names": list(model.feature_names), "hyperparameters": model.hyperparameters.model_dump(),
        "seed": model.seed, "notes": list(model.notes),
        "reports": [r.__dict__ for r in model.reports],
    }
    buf = io.BytesIO()
    torch.save({"meta": json.dumps(meta, sort_keys=True), "members": [m.state_dict() for m in model.members]}, buf)
    atomic_write_bytes(path, buf.getvalue())


def load_network(path: str | Path) -> FittedModel:
    """Read a model written by :func:`save_network` (weights only: nothing is executed on load)."""
    blob: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    meta = json.loads(blob["meta"])
    if meta.get("format_version") != NETWORK_FORMAT_VERSION:
        from autograde.core.errors import Problems

        problems = Problems()
        problems.add(path, None, f"model format {meta.get('format_version')} is not {NETWORK_FORMAT_VERSION}",
                     "refit the model with 'autograde rubric fit'")
        problems.raise_if_any()
    hp = Hyperparameters.model_validate(meta["hyperparameters"])
    counts = [len(v) for v in meta["option_values"]]
    members = []
    for state in blob["members"]:
        net = CalibrationNetwork(len(meta["feature_names"]), len(meta["judges"]), counts, hp.hidden1, hp.hidden2,
                                 torch.Generator().manual_seed(0), hp.init, hp.personalized)
        net.load_state_dict(state)
        members.append(net.eval())
    return FittedModel(members, tuple(meta["judges"]), tuple(meta["questions"]),
                       tuple(tuple(v) for v in meta["option_values"]), meta["main"], tuple(meta["feature_names"]),
                       hp, int(meta["seed"]), [MemberReport(**r) for r in meta["reports"]], tuple(meta["notes"]))
