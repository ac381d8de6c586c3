"""Which passages to judge next: sampling designs with known inclusion probabilities, drawn for a budget, seeded,
in rounds, and the design file that records every round.

Every design is a Poisson design over the pooled passages not judged yet (each is drawn independently with its
own probability ``pi``; the expected number drawn is the budget); a passage drawn in an earlier round is part of
every later round with probability 1. The designs differ in how ``pi`` is chosen:

- ``simple_random``: the same probability for every passage.
- ``stratified``: strata by the predicted grade (the nearest grade to the prediction's expected grade); Neyman
  allocation (Neyman 1934) from the earlier rounds (the pilot): a stratum's probability grows with the root mean
  square of its residuals (judged minus predicted grade) times how much its passages count in the leaderboards.
  Without a pilot: proportional allocation (the same probability everywhere).
- ``active``: per passage, how much it counts in the leaderboards times the expected size of its residual (from the
  pilot's residuals of its predicted grade, else the prediction's own spread): inclusion probabilities that grow
  with the expected error of the prediction (active statistical inference, Zrnic and Candes 2024).

How much a passage counts is the root sum of squares over the systems of its rank discount in each system's top
``importance_depth`` (the DCG weights). Stratified and active designs keep a uniform share of the budget
(``uniform_share``) so that every passage can be drawn: the estimates stay unbiased whatever the pilot says, and the
variance is at most ``1 / uniform_share`` times that of the simple random design.

The design file is a TSV: a first line ``#autograde-design <json>`` (every round: design, budget, seed, weight,
prediction, allocation), a header, then one line per pooled passage with ``pi_<k>`` and ``drawn_<k>`` per round.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograde.config.human_sample import DESIGN_KINDS
from autograde.core.errors import InvalidValueError, Problems
from autograde.core.ids import PairKey
from autograde.core.survey import capped_probabilities
from autograde.core.text import atomic_write_text, iter_lines
from autograde.ppi.measures import RankedPool

HEADER = "#autograde-design"


@dataclass
class Design:
    """The rounds drawn so far over one pool: ``pi[k]`` and ``drawn[k]`` (new in round k) per unit, in ``keys``
    order, and each round's record (``rounds[k]``: design, budget, seed, weight, ...)."""

    keys: list[PairKey]
    pi: list[np.ndarray] = field(default_factory=list)
    drawn: list[np.ndarray] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    lines: dict[PairKey, int] = field(default_factory=dict)
    """The design file's line of every unit (for messages)."""

    def known_before(self, k: int) -> np.ndarray:
        """Units drawn in the rounds before round ``k`` (0-based)."""
        out = np.zeros(len(self.keys), dtype=bool)
        for d in self.drawn[:k]:
            out |= d
        return out

    @property
    def all_drawn(self) -> np.ndarray:
        return self.known_before(len(self.drawn))


def importance(ranked: RankedPool, depth: int) -> np.ndarray:
    """How much each unit counts in the leaderboards: the root sum of squares over the systems of its DCG rank
    discount where a system ranks it in its top ``depth`` (0 where none does)."""
    w2 = np.zeros(ranked.n_units + 1)
    inside = (ranked.pos >= 0) & (ranked.rank > 0) & (ranked.rank <= depth)
    disc = np.where(inside, 1.0 / np.log2(np.maximum(ranked.rank, 1) + 1.0), 0.0)
    np.add.at(w2, np.where(inside, ranked.pos, ranked.n_units).ravel(), (disc**2).ravel())
    return np.asarray(np.sqrt(w2[:-1]), dtype=np.float64)


def _pilot(design: Design, labels: dict[PairKey, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(judged mask, observed grade, design weight 1/pi) of the units judged in earlier rounds."""
    n = len(design.keys)
    judged = np.zeros(n, dtype=bool)
    grade = np.zeros(n)
    weight = np.zeros(n)
    for k, d in enumerate(design.drawn):
        for i in np.flatnonzero(d):
            y = labels.get(design.keys[i])
            if y is not None:
                judged[i], grade[i], weight[i] = True, float(y), 1.0 / design.pi[k][i]
    return judged, grade, weight


def _rms_by_class(onehot: np.ndarray, values: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Design-weighted root mean square of ``values`` (B x N) per class (``onehot``: N x classes; NaN for a class
    without pilot units) and over every class (NaN without any): ``(B, classes)``, ``(B,)``."""
    den = weight @ onehot
    num = (weight * values**2) @ onehot
    per = np.sqrt(np.divide(num, den, out=np.full(den.shape, np.nan), where=den > 0))
    tot_den = den.sum(axis=1)
    total = np.sqrt(np.divide(num.sum(axis=1), tot_den, out=np.full(tot_den.shape, np.nan), where=tot_den > 0))
    return per, total


def round_probabilities(kind: str, budget: np.ndarray | float, known: np.ndarray, judged: np.ndarray,
                        grade: np.ndarray, pilot_weight: np.ndarray, probs: np.ndarray, levels: Sequence[int],
                        importance_w: np.ndarray, uniform_share: float) -> tuple[np.ndarray, str]:
    """The inclusion probabilities of the next round (``(B, N)``: many draws at once in a simulation): units
    ``known`` (drawn before) get 1, the others share ``budget`` as the design says; ``judged``, ``grade`` and
    ``pilot_weight`` (1/pi) are the pilot, ``probs`` the prediction per unit, ``importance_w`` how much each unit
    counts (:func:`importance`). Returns the probabilities and a note on the allocation."""
    if kind not in DESIGN_KINDS:
        raise InvalidValueError(f"unknown design {kind!r} (fix: use one of {', '.join(DESIGN_KINDS)})")
    b, n = known.shape
    budget_b = np.broadcast_to(np.asarray(budget, dtype=np.float64), (b,))
    lv = np.asarray(levels, dtype=np.float64)
    mean = probs @ lv
    onehot = (np.abs(mean[:, None] - lv[None, :]).argmin(axis=1)[:, None] == np.arange(len(lv))[None, :]) * 1.0
    hw = np.where(judged, pilot_weight, 0.0)
    resid = np.where(judged, grade - mean[None, :], 0.0)
    note = ""
    if kind == "simple_random":
        score = np.ones((b, n))
    elif kind == "stratified":
        per, total = _rms_by_class(onehot, importance_w[None, :] * resid, hw)
        no_pilot = np.isnan(total)
        filled = np.where(np.isnan(per), total[:, None], per)
        score = np.where(no_pilot[:, None], 1.0, filled @ onehot.T)
        note = "no pilot judgments: proportional allocation" if no_pilot.all() else ""
    else:
        per, total = _rms_by_class(onehot, resid, hw)
        no_pilot = np.isnan(total)
        own = np.sqrt(np.maximum(probs @ lv**2 - mean**2, 0.0))
        spread = np.where(no_pilot[:, None], own[None, :], np.where(np.isnan(per), total[:, None], per) @ onehot.T)
        score = importance_w[None, :] * spread
        note = "no pilot judgments: the prediction's own spread" if no_pilot.all() else ""
        flat = ~np.any((score > 0) & ~known, axis=1)
        if flat.any():
            score = np.where(flat[:, None], importance_w[None, :], score)
            note += "; no spread: importance alone"
    score = np.where(known, 0.0, score)
    empty = ~np.any(score > 0, axis=1)
    score = np.where(empty[:, None] & ~known, 1.0, score)
    share = 0.0 if kind == "simple_random" else uniform_share
    left = np.maximum((~known).sum(axis=1), 1)
    pi_free = capped_probabilities(score, budget_b * (1.0 - share))
    pi = np.where(known, 1.0, np.minimum(pi_free + (share * budget_b / left)[:, None], 1.0))
    return np.asarray(pi, dtype=np.float64), note.strip("; ")


def round_uniforms(seed: int, round_number: int, n: int) -> np.ndarray:
    """The uniforms a round draws with (unit i is drawn when its uniform is below its probability): the stream of
    ``numpy.random.default_rng([seed, round_number])``, a SeedSequence of both numbers, so every round's stream is
    independent of every other round's, a seed used in an earlier round included (reusing the earlier round's
    uniforms would draw only passages whose uniform fell between the two rounds' probabilities: a sample whose
    recorded probabilities are not the ones it was drawn with).

    >>> bool((round_uniforms(1, 1, 5) == round_uniforms(1, 1, 5)).all()), bool((round_uniforms(1, 1, 5) == round_uniforms(1, 2, 5)).any())
    (True, False)
    """
    return np.random.default_rng([int(seed), int(round_number)]).random(n)


def draw_round(design: Design, kind: str, budget: float, seed: int, ranked: RankedPool, probs: np.ndarray,
               levels: Sequence[int], labels: dict[PairKey, int], prediction: str, uniform_share: float = 0.2,
               importance_depth: int = 10, where: str = "the budget") -> dict[str, Any]:
    """Draw the next round into ``design`` (``probs``: the prediction's distribution over ``levels`` per unit;
    ``labels``: the judgments so far, the pilot) with the uniforms of :func:`round_uniforms` (independent of every
    earlier round, whatever the seed) and return its record."""
    n = len(design.keys)
    known = design.all_drawn
    left = int((~known).sum())
    if budget <= 0 or budget > left:
        raise InvalidValueError(f"{where}: a budget of {budget:g} passages does not fit: the pool has {n} passages, "
                                f"{left} of them not drawn yet (fix: a budget between 1 and {left})")
    judged, grade, hw = _pilot(design, labels)
    pi, note = round_probabilities(kind, budget, known[None], judged[None], grade[None], hw[None], probs, levels,
                                   importance(ranked, importance_depth), uniform_share)
    number = len(design.rounds) + 1
    drawn = (round_uniforms(seed, number, n) < pi[0]) & ~known
    share = 0.0 if kind == "simple_random" else uniform_share
    record = {"round": number, "design": kind, "budget": float(budget), "seed": int(seed),
              "weight": float(budget), "prediction": prediction, "uniform_share": share,
              "importance_depth": importance_depth, "drawn": int(drawn.sum()),
              "pilot": int(judged.sum()), "note": note}
    design.pi.append(pi[0])
    design.drawn.append(drawn)
    design.rounds.append(record)
    return record


def write_design(path: str | Path, design: Design) -> None:
    """The design file (atomic): header line with every round's record, column names, one line per unit."""
    k = len(design.rounds)
    cols = ["query_id", "passage_id"] + [c for r in range(1, k + 1) for c in (f"pi_{r}", f"drawn_{r}")]
    lines = [f"{HEADER} {json.dumps({'version': 1, 'rounds': design.rounds}, sort_keys=True)}", "\t".join(cols)]
    for i, (q, d) in enumerate(design.keys):
        vals = [q, d]
        for r in range(k):
            vals += [repr(float(design.pi[r][i])), "1" if design.drawn[r][i] else "0"]
        lines.append("\t".join(vals))
    atomic_write_text(path, "\n".join(lines) + "\n")


def read_design(path: str | Path, pool: Sequence[PairKey]) -> Design:
    """Read a design file and check it against the pool: every problem names the file and line (a malformed line,
    a passage outside the pool, a pooled passage without a line, a probability outside (0, 1] for a drawn passage)."""
    probs = Problems()
    index = {k: i for i, k in enumerate(pool)}
    design = Design(list(pool))
    rows: dict[PairKey, tuple[list[float], list[bool]]] = {}
    rounds: list[dict[str, Any]] = []
    n_rounds = 0
    for n, line in iter_lines(path, probs):
        if n == 1:
            if not line.startswith(HEADER):
                probs.add(path, n, "not a design file (its first line must start with #autograde-design)",
                          "give the file 'autograde sample draw' wrote")
                break
            try:
                rounds = list(json.loads(line[len(HEADER):])["rounds"])
            except (ValueError, KeyError, TypeError) as exc:
                probs.add(path, n, f"the design header is not valid JSON ({exc})", "restore the line the tool wrote")
                break
            n_rounds = len(rounds)
            continue
        if n == 2 or not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 2 + 2 * n_rounds:
            probs.add(path, n, f"{len(cols)} columns, expected {2 + 2 * n_rounds} (query_id, passage_id, pi and drawn "
                      f"of each of {n_rounds} round(s))", "restore the line the tool wrote")
            continue
        key = (cols[0], cols[1])
        if key not in index:
            probs.add(path, n, f"query {key[0]!r} passage {key[1]!r} is not in the pool", "the pool changed since "
                      "the design was drawn: draw a new design for this pool (autograde sample draw)")
            continue
        try:
            pis = [float(cols[2 + 2 * r]) for r in range(n_rounds)]
            drawn = [cols[3 + 2 * r] == "1" for r in range(n_rounds)]
        except ValueError:
            probs.add(path, n, "an inclusion probability is not a number", "restore the line the tool wrote")
            continue
        for r, (p, dr) in enumerate(zip(pis, drawn, strict=True)):
            if not 0.0 <= p <= 1.0 or p != p:
                probs.add(path, n, f"round {r + 1}: inclusion probability {p} is outside [0, 1]",
                          "restore the line the tool wrote")
            elif dr and p <= 0.0:
                probs.add(path, n, f"round {r + 1}: passage drawn with inclusion probability 0 (its estimate "
                          "weight 1/pi is undefined)", "restore the probability the tool wrote, or redraw the design")
        rows[key] = (pis, drawn)
        design.lines[key] = n
    if rounds:
        missing = [k for k in pool if k not in rows]
        if missing:
            probs.add(path, 1, f"{len(missing)} pooled passage(s) have no line (first: query {missing[0][0]!r} passage "
                      f"{missing[0][1]!r}): the pool changed since the design was drawn",
                      "draw a new design for this pool (autograde sample draw)")
    probs.raise_if_any()
    design.rounds = rounds
    for r in range(n_rounds):
        design.pi.append(np.array([rows[k][0][r] for k in pool]))
        design.drawn.append(np.array([rows[k][1][r] for k in pool], dtype=bool))
    return design
