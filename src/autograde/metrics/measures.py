"""Every measure behind one parser and one value type, in the spirit of ``ir_measures``: trec_eval measures, the
evaluation server's names, nugget scores and cover.

>>> parse_measure("ndcg_cut_10")
Measure(family='trec_eval', name='ndcg_cut_10', trec='ndcg_cut_10', cutoff=10, truncate=None, missing='zero')
>>> m = parse_measure("ndcg@10"); (m.family, m.trec, m.cutoff)
('server', 'ndcg_cut_10', 10)
>>> parse_measure("mrr@3").truncate, parse_measure("VitalScore(strict=True)").name, parse_measure("ncover").missing
(3, 'strict_vital_score', 'skip')
>>> parse_measure("map", "server").family
'server'

A measure is a value (:class:`Measure`): its family, its canonical name (what leaderboard files and tables are
named by), the trec_eval measure that computes it (trec_eval and evaluation-server families), a rank cutoff, and
what a query without a value counts (``missing``: ``zero`` counts 0 in the mean, as trec_eval ``-c``; ``skip``
leaves the query out, as the workbench's cover and the nugget scorer do). Each family is one :class:`Family` of
:data:`FAMILIES` with its own parser; :func:`parse_measure` asks them in order, or only the one named.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from autograde.core.errors import InvalidValueError
from autograde.core.layout import MissingQueries

FamilyName = Literal["trec_eval", "server", "nugget", "cover", "gain"]


@dataclass(frozen=True)
class Measure:
    """One measure: family, canonical name, the trec_eval measure behind it, cutoff, truncation, missing-query rule."""

    family: FamilyName
    name: str
    trec: str | None = None
    """The trec_eval measure computing it (trec_eval and server families)."""
    cutoff: int | None = None
    """The rank cutoff in its name (``P_10``, ``ndcg@10``), if any."""
    truncate: int | None = None
    """Rankings are cut to their top ``truncate`` (trec_eval order) before evaluation (the server's ``mrr@k``)."""
    missing: MissingQueries = "zero"
    """What a query without a value counts in a mean: 0 (``zero``) or nothing (``skip``)."""

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Family:
    """A measure family: its parser (None when a text is not one of its measures) and examples for messages."""

    name: FamilyName
    parse: Callable[[str], Measure | None]
    examples: str


@functools.lru_cache(maxsize=1)
def _trec_bases() -> tuple[frozenset[str], frozenset[str]]:
    import pytrec_eval

    return frozenset(pytrec_eval.supported_measures), frozenset(pytrec_eval.supported_nicknames)


@functools.lru_cache(maxsize=4096)
def split_trec_measure(name: str) -> tuple[str, tuple[str, ...] | None] | None:
    """A trec_eval measure name as (base, parameters) (``None`` parameters: trec_eval's defaults), or None when it
    is not one.

    >>> split_trec_measure("ndcg_cut_10"), split_trec_measure("P.5,10"), split_trec_measure("map")
    (('ndcg_cut', ('10',)), ('P', ('5', '10')), ('map', None))
    """
    bases, nicknames = _trec_bases()
    if name in bases or name in nicknames:
        return name, None
    # Longest base first, so "Rprec_mult_0.20" is Rprec_mult(0.20), never Rprec(...).
    for base in sorted(bases, key=len, reverse=True):
        m = re.fullmatch(re.escape(base) + r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)", name)
        if m:
            return base, tuple(m.group(1).split(","))
    return None


def _trec(text: str) -> Measure | None:
    split = split_trec_measure(text)
    if split is None:
        return None
    base, params = split
    cutoff = int(params[0]) if params and len(params) == 1 and params[0].isdigit() else None
    return Measure("trec_eval", text, trec=text, cutoff=cutoff)


SERVER_TREC = {"mrr": "recip_rank", "map": "map", "ndcg": "ndcg_cut", "P": "P", "recall": "recall"}
"""The evaluation server's names and the trec_eval measures behind them (``mrr`` is recip_rank without a cutoff)."""


def _server(text: str) -> Measure | None:
    if text in ("mrr", "map"):
        return Measure("server", text, trec=SERVER_TREC[text])
    m = re.fullmatch(r"(mrr|ndcg|P|recall)@([1-9][0-9]*)", text)
    if not m:
        return None
    base, k = m.group(1), int(m.group(2))
    if base == "mrr":  # recip_rank has no cutoff: the ranking is truncated first
        return Measure("server", text, trec="recip_rank", cutoff=k, truncate=k)
    return Measure("server", text, trec=f"{SERVER_TREC[base]}_{k}", cutoff=k)


def _nugget(text: str) -> Measure | None:
    from autograde.metrics.nuggets import nugget_score

    score = nugget_score(text)
    return None if score is None else Measure("nugget", score.name, missing="skip")


def _cover(text: str) -> Measure | None:
    return Measure("cover", text, missing="skip") if text in ("cover", "ncover") else None


def _gain(text: str) -> Measure | None:
    """Measures linear in the per-passage gain that trec_eval lacks (estimated from a human sample: DCG@k with the
    raw grade as gain, rank-biased precision with persistence p over binary relevance)."""
    m = re.fullmatch(r"dcg_cut_([1-9][0-9]*)|rbp_(0\.[0-9]*[1-9])", text)
    if not m:
        return None
    return Measure("gain", text, cutoff=int(m.group(1)) if m.group(1) else None)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("trec_eval", _trec, "map, recip_rank, P_10, recall_100, ndcg_cut_10, Rprec, bpref"),
    Family("server", _server, "map, mrr, mrr@10, ndcg@10, P@10, recall@100"),
    Family("nugget", _nugget, "all_score, strict_vital_score, weighted_score, AllScore(strict=True)"),
    Family("cover", _cover, "cover, ncover"),
    Family("gain", _gain, "dcg_cut_10, rbp_0.8"),
)}
"""Every measure family, in the order :func:`parse_measure` asks them."""


def parse_measure(text: str, family: str | None = None) -> Measure:
    """The measure named ``text`` (of ``family`` only, when given); an unknown name lists each family's examples."""
    families = [FAMILIES[family]] if family else list(FAMILIES.values())
    for f in families:
        measure = f.parse(text.strip())
        if measure is not None:
            return measure
    where = f"{family} measure" if family else "measure"
    raise InvalidValueError(f"unknown {where} {text!r}; valid names look like: "
                            + "; ".join(f"{f.name}: {f.examples}" for f in families))
