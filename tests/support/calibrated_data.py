"""Hand-made qrels of several sources and small, quick calibration settings for the calibrated-qrels tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NET = {"members": 2, "personalized": False, "batch_size": 32, "patience": 5, "hidden1": 8, "hidden2": 8,
       "learning_rate": 0.02, "pretrain_epochs": 0}
FAST = {"network": NET, "estimators": ["logistic", "network"], "logistic_c": [1.0], "selection_folds": 3}
"""Two candidates (one regression, one small network) and 3 inner folds: seconds on the hand-made data."""


def tiny_sources(root: Path) -> dict[str, Path]:
    """8 queries x 12 passages. Truth: level = (passage number) % 4. Unjudged: passage 11 of every query.

    Sources: 'close' gives level + noise in {0, 1} capped at 3 (0..3 labels), 'binary' gives level >= 2 for
    3 of every 4 passages and the opposite for the rest, 'random' is independent of the truth.
    """
    rng = np.random.default_rng(5)
    truth, close, binary, rand = [], [], [], []
    for q in range(8):
        for d in range(12):
            level = d % 4
            key = f"q{q} 0 q{q}d{d}"
            if d != 11:
                truth.append(f"{key} {level}")
            close.append(f"{key} {min(3, level + int(rng.integers(0, 2)))}")
            binary.append(f"{key} {int(level >= 2) if d % 4 != 3 or q % 2 else int(level < 2)}")
            rand.append(f"{key} {int(rng.integers(0, 3))}")
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, rows in (("judgments", truth), ("close", close), ("binary", binary), ("random", rand)):
        out[name] = root / f"{name}.qrel"
        out[name].write_text("\n".join(rows) + "\n")
    return out


UNDERFIT = {"hidden1": 8, "hidden2": 8, "members": 1, "early_stopping": False, "pretrain_epochs": 0,
            "finetune_epochs": 2, "learning_rate": 0.01, "batch_size": 32, "personalized": False, "judge_l2": 0.0}
"""A network trained for two epochs: far from converged, so a refit on every passage (a quarter more steps than a
fold model on three quarters of them) puts its probabilities on another scale than its fold models'."""


def skewed_sources(root: Path, queries: int = 16, per_query: int = 25) -> dict[str, Path]:
    """A judged collection with DL-like level shares (55%, 25%, 12%, 8%, drawn per passage, seeded) and three
    graders 'a', 'b', 'c', each the judged level plus -1, 0 or +1 (uniform), clipped to 0..3."""
    rng = np.random.default_rng(0)
    levels = rng.choice(4, size=queries * per_query, p=[0.55, 0.25, 0.12, 0.08])
    rows: dict[str, list[str]] = {"judgments": [], "a": [], "b": [], "c": []}
    graders = {g: np.clip(levels + rng.integers(-1, 2, len(levels)), 0, 3) for g in ("a", "b", "c")}
    for i, level in enumerate(levels.tolist()):
        key = f"q{i // per_query} 0 q{i // per_query}d{i % per_query}"
        rows["judgments"].append(f"{key} {level}")
        for g, labels in graders.items():
            rows[g].append(f"{key} {int(labels[i])}")
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, lines in rows.items():
        out[name] = root / f"{name}.qrel"
        out[name].write_text("\n".join(lines) + "\n")
    return out
