"""Synthetic per-query leaderboards the agreement tests share (the correlation report's and the metric's)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def per_query_table(n_sys: int = 6, n_q: int = 12, seed: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """(rows run, query_id, value in [0, 1], official ranks): system ``s0`` best by construction, noise per query."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.8, 0.2, n_sys)
    rows = [(f"s{s}", f"q{q}", float(np.clip(quality[s] + rng.normal(0, 0.25), 0, 1)))
            for s in range(n_sys) for q in range(n_q)]
    official = {f"s{s}": float(s + 1) for s in range(n_sys)}
    return pd.DataFrame(rows, columns=["run", "query_id", "value"]), official
