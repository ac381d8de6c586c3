"""The human sample: its judgments read against the pool, and the sampling rounds (inclusion probabilities) the
estimates weight them by, from the design file or a simple random sample's rate.

Every judged pair is used: a judgment outside the pool, outside the grade scale, or of a passage the design did
not draw is an error naming its file and line; so is a round of the design that is judged only in part. A round
none of whose passages is judged yet is pending and left out (said in the summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import PairKey
from autograde.ppi.design import Design
from autograde.ppi.estimators import Round
from autograde.ppi.judgments import read_human_judgments


@dataclass
class Sample:
    """Judged grades per pool unit (NaN: not judged), the rounds, and what the summary says about them."""

    grades: np.ndarray
    rounds: list[Round]
    info: dict[str, Any] = field(default_factory=dict)


def read_judgments(path: str | Path, pool: Sequence[PairKey], levels: Sequence[int]
                   ) -> tuple[np.ndarray, dict[PairKey, int]]:
    """The judged grade of every pool unit (NaN where not judged) and the line of every judgment, read as the
    pre-job checks read them (:func:`autograde.ppi.judgments.read_human_judgments`): a pair outside the pool, a grade
    outside ``levels``, a malformed line or two different grades of one pair are errors with file and line; an
    identical repeat is a warning and counts once."""
    probs = Problems()
    found = read_human_judgments(str(path), probs, levels, pool=set(pool))
    probs.raise_if_any()
    index = {k: i for i, k in enumerate(pool)}
    grades = np.full(len(pool), np.nan)
    for key, judgment in found.items():
        grades[index[key]] = judgment.grade
    return grades, {key: judgment.line for key, judgment in found.items()}


def simple_random_rounds(grades: np.ndarray, rate: float | None) -> tuple[list[Round], dict[str, Any]]:
    """One round of a simple random sample: every judged unit, inclusion probability ``rate`` (default: judged /
    pooled, conditioning on the sample's size)."""
    judged = ~np.isnan(grades)
    n, big_n = int(judged.sum()), len(grades)
    p = float(rate) if rate is not None else n / big_n
    rnd = Round(np.full((1, big_n), p), judged[None], 1.0)
    return [rnd], {"design": "simple_random", "rate": p, "judged": n, "pool": big_n, "rounds": 1, "pending": []}


def design_rounds(design: Design, grades: np.ndarray, judgment_lines: dict[PairKey, int], sample_path: str,
                  design_path: str) -> tuple[list[Round], dict[str, Any]]:
    """The judged rounds of a design: each holds the units drawn in it or before (those with probability 1); every
    judgment must belong to a drawn unit, and a round is judged completely or not at all (then it is pending)."""
    probs = Problems()
    judged = ~np.isnan(grades)
    drawn_any = design.all_drawn
    for i in np.flatnonzero(judged & ~drawn_any):
        key = design.keys[i]
        probs.add(sample_path, judgment_lines.get(key), f"query {key[0]!r} passage {key[1]!r} is judged but the "
                  f"design ({design_path}) did not draw it: its inclusion probability is unknown",
                  "judge only the passages of the design's worklist, or draw the design that produced this sample")
    complete, pending = [], []
    for k, drawn in enumerate(design.drawn):
        done = judged & drawn
        if not done.any():
            pending.append(k + 1)
            continue
        if pending:
            probs.add(design_path, 1, f"round {k + 1} is judged but round {pending[0]} is not",
                      "judge the rounds in the order they were drawn")
        missing = np.flatnonzero(drawn & ~judged)
        for i in missing[:20]:
            key = design.keys[i]
            probs.add(design_path, design.lines.get(key), f"round {k + 1} drew query {key[0]!r} passage {key[1]!r} "
                      f"but {sample_path} has no judgment of it ({len(missing)} of the round's {int(drawn.sum())} "
                      "passages are not judged): a partly judged round would bias the estimates",
                      "judge every passage of the round (the judging page lists them), then estimate")
        before = design.known_before(k)
        bad = np.flatnonzero(before & (design.pi[k] < 1.0))
        for i in bad[:5]:
            probs.add(design_path, design.lines.get(design.keys[i]), f"round {k + 1}: a passage drawn in an earlier "
                      f"round has probability {design.pi[k][i]} (it must be 1: its judgment is known)",
                      "restore the file the tool wrote")
        complete.append(k)
    probs.raise_if_any()
    total = sum(float(design.rounds[k].get("weight", 1.0)) for k in complete) or 1.0
    rounds = []
    for k in complete:
        inside = design.known_before(k) | design.drawn[k]
        pi = np.where(design.known_before(k), 1.0, design.pi[k])
        rounds.append(Round(pi[None], inside[None], float(design.rounds[k].get("weight", 1.0)) / total))
    info = {"design": "+".join(str(design.rounds[k].get("design")) for k in complete) or "none",
            "judged": int(judged.sum()), "pool": len(grades), "rounds": len(complete), "pending": pending,
            "round_records": [design.rounds[k] for k in complete]}
    return rounds, info
