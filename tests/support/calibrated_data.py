"""Hand-made qrels of several sources and small, quick calibration settings for the calibrated-qrels tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NET = {"members": 2, "personalized": False, "batch_size": 32, "patience": 5, "hidden1": 8, "hidden2": 8,
       "learning_rate": 0.02}
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
