"""The perturbations of the robustness audit: each turns one sampled (query, passage) pair into one or more
perturbed passages, deterministically (the off-topic donor comes from a seeded choice).

- ``stuffing``: the passage with the query's terms (its words less English stopwords) appended ``repeats`` times;
- ``injection``: the passage with one injection text appended (one copy per text);
- ``query``: the query itself as the passage;
- ``first_sentence``: the passage's first sentence only;
- ``off_topic``: a passage sampled for another query, with this query's terms appended once.

>>> query_terms("how do vaccines train the immune system?")
['vaccines', 'train', 'immune', 'system']
>>> first_sentence("Rock began in the 1950s. It grew from blues.")
'Rock began in the 1950s.'
>>> [p.variant for p in perturb("stuffing", "q", "vaccines?", "Text.", repeats=2)], \\
...     perturb("stuffing", "q", "vaccines?", "Text.", repeats=2)[0].text
(['stuffing'], 'Text. vaccines vaccines')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autograde.config.audit import INJECTIONS, PERTURBATIONS
from autograde.core.errors import InvalidValueError, UnknownNameError
from autograde.grading.parse import ENGLISH_STOPWORDS

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class Perturbed:
    """One perturbed copy: which perturbation made it (``variant`` names the copy, e.g. ``injection-2``)."""

    perturbation: str
    variant: str
    text: str


def query_terms(query: str) -> list[str]:
    """The query's words (lower-cased), English stopwords left out (all words when every one is a stopword)."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in ENGLISH_STOPWORDS]
    return kept or words


def first_sentence(text: str) -> str:
    """The text up to its first sentence end (``.``, ``!`` or ``?`` before a space and a capital or digit)."""
    stripped = text.strip()
    parts = _SENTENCE_END.split(stripped, maxsplit=1)
    return parts[0] if parts else stripped


def check_perturbations(names: Sequence[str]) -> None:
    """An :class:`UnknownNameError` naming the valid perturbations for any unknown name."""
    bad = [n for n in names if n not in PERTURBATIONS]
    if bad:
        raise UnknownNameError(f"unknown perturbation(s) {', '.join(map(repr, bad))}; valid: {', '.join(PERTURBATIONS)}")


@dataclass(frozen=True)
class PerturbationInput:
    """What a perturbation reads: the pair, its query's terms, and the settings (``donor``: the off-topic passage)."""

    name: str
    query_id: str
    query: str
    passage: str
    terms: str
    repeats: int
    injections: Sequence[str]
    donor: str | None


def _stuffing(x: PerturbationInput) -> list[Perturbed]:
    return [Perturbed(x.name, x.name, (x.passage.rstrip() + (" " + x.terms) * x.repeats).strip())]


def _injection(x: PerturbationInput) -> list[Perturbed]:
    return [Perturbed(x.name, f"{x.name}-{i + 1}", f"{x.passage.rstrip()} {text}".strip())
            for i, text in enumerate(x.injections)]


def _query(x: PerturbationInput) -> list[Perturbed]:
    return [Perturbed(x.name, x.name, x.query)]


def _first_sentence(x: PerturbationInput) -> list[Perturbed]:
    return [Perturbed(x.name, x.name, first_sentence(x.passage))]


def _off_topic(x: PerturbationInput) -> list[Perturbed]:
    if x.donor is None:
        raise InvalidValueError(f"the off_topic perturbation of query {x.query_id!r} needs a passage of another "
                                "query (the sample has pairs of one query only: sample more, or leave off_topic out)")
    return [Perturbed(x.name, x.name, f"{x.donor.rstrip()} {x.terms}".strip())]


PERTURB: dict[str, Callable[[PerturbationInput], list[Perturbed]]] = {
    "stuffing": _stuffing, "injection": _injection, "query": _query, "first_sentence": _first_sentence,
    "off_topic": _off_topic}
"""Every perturbation by its name (the names are :data:`autograde.config.audit.PERTURBATIONS`; a test keeps the two
equal)."""


def perturb(name: str, query_id: str, query: str, passage: str, *, repeats: int = 5,
            injections: Sequence[str] = INJECTIONS, donor: str | None = None) -> list[Perturbed]:
    """The perturbed copies of one pair under perturbation ``name`` (``donor``: the off-topic passage)."""
    check_perturbations([name])
    return PERTURB[name](PerturbationInput(name, query_id, query, passage, " ".join(query_terms(query)), repeats,
                                           injections, donor))
