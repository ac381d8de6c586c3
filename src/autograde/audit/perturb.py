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
from collections.abc import Sequence
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


def perturb(name: str, query_id: str, query: str, passage: str, *, repeats: int = 5,
            injections: Sequence[str] = INJECTIONS, donor: str | None = None) -> list[Perturbed]:
    """The perturbed copies of one pair under perturbation ``name`` (``donor``: the off-topic passage)."""
    check_perturbations([name])
    terms = " ".join(query_terms(query))
    if name == "stuffing":
        return [Perturbed(name, name, (passage.rstrip() + (" " + terms) * repeats).strip())]
    if name == "injection":
        return [Perturbed(name, f"{name}-{i + 1}", f"{passage.rstrip()} {text}".strip())
                for i, text in enumerate(injections)]
    if name == "query":
        return [Perturbed(name, name, query)]
    if name == "first_sentence":
        return [Perturbed(name, name, first_sentence(passage))]
    if donor is None:
        raise InvalidValueError(f"the off_topic perturbation of query {query_id!r} needs a passage of another "
                                "query (the sample has pairs of one query only: sample more, or leave off_topic out)")
    return [Perturbed(name, name, f"{donor.rstrip()} {terms}".strip())]
