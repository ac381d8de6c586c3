"""Turn a grader LLM's text into a grade, following the workbench's documented rules.

>>> parse_rating("**4**").grade, parse_rating("unanswerable").grade, parse_rating("a good answer").status
(4, 0, 'unparseable')
>>> parse_rating("a good answer", legacy=True).grade  # the workbench's inverted fallback
0
>>> parse_yes_no("Yes.").grade, answer_key_match("The epidermis.", ["epidermis"])
(1, True)

Default rules (correct by design):

- A rating is a single digit, with only non-word characters around it (``4``, ``4.``, ``(4)``, ``**4**``); a digit
  outside the label set (``6``) is unparseable, so is ``45``, ``Rating: 4`` or ``4 - good``
  (``tolerant=True`` also accepts a digit followed by whitespace and text, the workbench's "tolerant" rater).
- The unanswerable expressions ("unanswerable", "no", "no answer", "not enough information", "unknown",
  "it is not possible to tell", "it does not say", "no relevant information") mean grade 0: exact match after
  lower-casing and removing punctuation; ``fuzzy=True`` adds the workbench's fuzzy match (ratio > 80).
- Anything else is ``unparseable``: never silently a grade.

``legacy=True`` reproduces the original workbench exactly, including its inverted fallback (text that is NOT an
unanswerable expression becomes 0, an unanswerable expression becomes 1, an empty answer 1). Results that only
the fallback turned into a grade carry ``fallback=True`` so they can still be counted.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from autograde.grading.umbrela import UMBRELA_PARSERS

if TYPE_CHECKING:
    from autograde.grading.prompts import PromptClass

UNANSWERABLE_EXPRESSIONS: tuple[str, ...] = (
    "unanswerable",
    "no",
    "no answer",
    "not enough information",
    "unknown",
    "it is not possible to tell",
    "it does not say",
    "no relevant information",
)
"""The workbench's / EXAM++'s expressions of unanswerability (EXAM++ paper, Section 4.2.1)."""

YES_WORDS = frozenset({"yes", "true", "correct"})
NO_WORDS = frozenset({"no", "false", "incorrect"})

# NLTK's English stopword list (``nltk.corpus.stopwords.words('english')``), built in because NLTK data cannot
# be downloaded at run time. Answers are stripped of punctuation before stopword removal, so only the
# apostrophe-free entries can ever match; the list is identical in that respect across NLTK versions.
ENGLISH_STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him
    his himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom
    this that that'll these those am is are was were be been being have has had having do does did doing a an the
    and but if or because as until while of at by for with about against between into through during before after
    above below to from up down in out on off over under again further then once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very s t can will just don
    don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn
    hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()
)

TextStatus = Literal["ok", "unparseable"]
"""What parsing a response gives (a failed request never reaches the parser)."""


@dataclass(frozen=True)
class Parsed:
    """A parse result: ``grade`` is None exactly when ``status`` is ``unparseable``; ``reason`` says why."""

    grade: int | None
    status: TextStatus = "ok"
    label: str | None = None
    reason: str = ""
    fallback: bool = False

    @staticmethod
    def fail(reason: str) -> Parsed:
        return Parsed(None, "unparseable", None, reason)


# ----------------------------------------------------------------------------------------------------- helpers

_PUNCT_RE = re.compile(r"[^\w\s]")
_WS_RE = re.compile(r"\s+")


def normalize_response(text: str) -> str:
    """Lower-case, drop punctuation, collapse whitespace."""
    return _WS_RE.sub(" ", _PUNCT_RE.sub("", text.lower())).strip()


def fuzz_ratio(a: str, b: str) -> int:
    """``fuzzywuzzy.fuzz.ratio`` (its pure-Python path): round(100 * difflib ratio), 0 for empty strings."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return int(round(100 * difflib.SequenceMatcher(None, a, b).ratio()))


@lru_cache(maxsize=1)
def _stemmer():  # nltk type
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def stem(word: str) -> str:
    """Porter stem (NLTK's implementation, which needs no data files)."""
    return _stemmer().stem(word)


_CONTRACTIONS2 = re.compile(r"(?i)\b(can)(not)\b|\b(gim)(me)\b|\b(gon)(na)\b|\b(got)(ta)\b|\b(lem)(me)\b|\b(wan)(na)\b")


def tokenize(text: str) -> list[str]:
    """Word tokens as NLTK's ``word_tokenize`` gives them for punctuation-free text (no data files needed)."""
    try:
        from nltk.tokenize import NLTKWordTokenizer
    except ImportError:  # pragma: no cover - nltk comes with rouge-score
        text = _CONTRACTIONS2.sub(lambda m: " ".join(g for g in m.groups() if g), text)
        return text.split()
    return NLTKWordTokenizer().tokenize(text)


def stop_stem_normalize(text: str) -> str:
    """EXAM++ answer normalization: lower-case, drop punctuation, tokenize, drop stopwords, Porter stem."""
    text = text.lower().strip().translate(str.maketrans("", "", string.punctuation))
    tokens = [t for t in tokenize(text) if t not in ENGLISH_STOPWORDS]
    return " ".join(stem(t) for t in tokens)


_NORMALIZED_UNANSWERABLE = frozenset(normalize_response(e) for e in UNANSWERABLE_EXPRESSIONS)


def is_unanswerable(text: str, *, fuzzy: bool = False) -> bool:
    """Whether ``text`` is one of the unanswerable expressions (exact after normalization; optionally fuzzy)."""
    norm = normalize_response(text)
    if not norm:
        return False
    if norm in _NORMALIZED_UNANSWERABLE:
        return True
    return fuzzy and any(fuzz_ratio(norm, e) > 80 for e in _NORMALIZED_UNANSWERABLE)


def _legacy_is_answer(answer: str) -> bool:
    """The workbench's ``UnanswerableMatcher2.check_unanswer``: True unless ``answer`` is (fuzzily) unanswerable.

    Exact membership, then fuzzy ratio > 80 between the Porter stems of the whole lower-cased strings; an
    answer whose stem is empty counts as not an answer.
    """
    if answer in UNANSWERABLE_EXPRESSIONS:
        return False
    stemmed = stem(answer.lower())
    if len(stemmed) < 1:
        return False
    golds = {stem(e.lower()) for e in UNANSWERABLE_EXPRESSIONS}
    return not any(fuzz_ratio(stemmed, g) > 80 for g in golds)


# ----------------------------------------------------------------------------------------------------- ratings

_RATING_RE = re.compile(r"[^\w]*([0-9])[^\w]*")
_TOLERANT_RE = re.compile(r"[^\w]*([0-9])[^\w]*\s.*", re.DOTALL)


def parse_rating(
    text: str,
    allowed: Sequence[int] = range(6),
    *,
    legacy: bool = False,
    tolerant: bool = False,
    fuzzy: bool = False,
) -> Parsed:
    """Parse a self-rating. ``allowed``: the valid grades (0-5; Thomas: 0-2)."""
    allowed = tuple(allowed)
    if legacy:
        return _legacy_rating(text, max(allowed), tolerant=tolerant)
    stripped = text.strip()
    if not stripped:
        return Parsed.fail("empty response")
    m = _RATING_RE.fullmatch(stripped) or (_TOLERANT_RE.fullmatch(stripped) if tolerant else None)
    if m:
        rating = int(m.group(1))
        if rating in allowed:
            return Parsed(rating, label=str(rating), reason="rating")
        return Parsed.fail(f"rating {rating} outside {min(allowed)}-{max(allowed)}")
    if is_unanswerable(stripped, fuzzy=fuzzy):
        return Parsed(0, reason="unanswerable expression")
    return Parsed.fail("not a single digit rating nor an unanswerable expression")


def _legacy_rating(text: str, max_valid: int, *, tolerant: bool) -> Parsed:
    """The workbench's ``SelfRaterStrict`` / ``SelfRaterTolerant`` (max rating 5), capped as its direct prompts do."""
    m = (_TOLERANT_RE if tolerant else _RATING_RE).fullmatch(text)
    if m:
        rating = int(m.group(1))
        if rating <= 5:
            if rating > max_valid:  # SelfRatingDirectGradingPrompt (Thomas): ratings above 2 become 0
                return Parsed(0, reason="legacy: rating above the scale -> 0", fallback=True)
            return Parsed(rating, label=str(rating), reason="rating")
        # out of range: the inverted fallback below applies
    if _legacy_is_answer(text):
        return Parsed(0, reason="legacy: text that is not unanswerable -> 0", fallback=True)
    return Parsed(1 if max_valid >= 1 else 0, reason="legacy: unanswerable expression -> 1", fallback=True)


# ------------------------------------------------------------------------------------------------------ yes/no


def parse_yes_no(text: str, *, legacy: bool = False, fuzzy: bool = False) -> Parsed:
    """Parse a yes/no answer: a leading yes/true/correct is 1, no/false/incorrect or unanswerable text is 0."""
    if legacy:
        # DirectGradingPrompt.check_answer: unanswerable (or empty) -> 0; else 1 iff yes/correct/true exactly.
        if not _legacy_is_answer(text):
            return Parsed(0, label="no", reason="legacy: unanswerable expression -> 0")
        if text.lower() in YES_WORDS:
            return Parsed(1, label="yes", reason="yes")
        return Parsed(0, label="no", reason="legacy: anything but yes -> 0", fallback=True)
    norm = normalize_response(text)
    if not norm:
        return Parsed.fail("empty response")
    first = norm.split()[0]
    if first in YES_WORDS:
        return Parsed(1, label="yes", reason="yes")
    if first in NO_WORDS:
        return Parsed(0, label="no", reason="no")
    if is_unanswerable(text, fuzzy=fuzzy):
        return Parsed(0, label="no", reason="unanswerable expression")
    return Parsed.fail("neither yes nor no")


# ------------------------------------------------------------------------------------------------- label sets


def label_set_kind(labels: Mapping[str, int]) -> Literal["digits", "yes_no", "words"]:
    """How a label set is parsed: single digits (ratings), yes/no, or whole-word labels."""
    keys = [k.lower() for k in labels]
    if keys and all(len(k) == 1 and k.isdigit() for k in keys):
        return "digits"
    if set(keys) == {"yes", "no"}:
        return "yes_no"
    return "words"


def parse_labels(
    text: str,
    labels: Mapping[str, int],
    *,
    legacy: bool = False,
    tolerant: bool = False,
    fuzzy: bool = False,
) -> Parsed:
    """Parse ``text`` against a prompt's label set and map the label to its grade."""
    kind = label_set_kind(labels)
    if kind == "digits":
        p = parse_rating(text, sorted(int(k) for k in labels), legacy=legacy, tolerant=tolerant, fuzzy=fuzzy)
        if p.label is not None:
            return Parsed(labels[p.label], p.status, p.label, p.reason, p.fallback)
        return p
    if kind == "yes_no":
        p = parse_yes_no(text, legacy=legacy, fuzzy=fuzzy)
        if p.label is not None:
            key = next(k for k in labels if k.lower() == p.label)
            return Parsed(labels[key], p.status, key, p.reason, p.fallback)
        return p
    norm = normalize_response(text)
    if not norm:
        return Parsed.fail("empty response")
    by_norm = {normalize_response(k): k for k in labels}
    if norm in by_norm:
        key = by_norm[norm]
        return Parsed(labels[key], label=key, reason="label")
    first = norm.split()[0]
    if first in by_norm:
        key = by_norm[first]
        return Parsed(labels[key], label=key, reason="leading label")
    return Parsed.fail("no label of the label set")


# -------------------------------------------------------------------------------------------------- extraction

_ILL_FORMED_RE = re.compile(r"\W*(?:\w|[(\[][ivx]{1,4}[)\]]|[ivx]{1,4}[.)])?\W*", re.IGNORECASE)


def is_ill_formed(answer: str) -> bool:
    """An ill-formed answer (EXAM++: "a." or "(iii)"): empty, one character, or a bare roman-numeral choice."""
    return _ILL_FORMED_RE.fullmatch(answer.strip()) is not None


def parse_extraction(text: str, *, legacy: bool = False, fuzzy: bool = False) -> Parsed:
    """Grade an extracted answer: 0 if it says unanswerable (or is ill-formed), else 1."""
    if legacy:
        # UnanswerableMatcher.check_answer: correct unless an unanswerable expression (exact or stemmed fuzzy).
        ok = _legacy_is_answer(text)
        return Parsed(1 if ok else 0, reason="answered" if ok else "unanswerable expression")
    if is_unanswerable(text, fuzzy=fuzzy):
        return Parsed(0, reason="unanswerable expression")
    if is_ill_formed(text):
        return Parsed(0, reason="ill-formed answer")
    return Parsed(1, reason="answered")


def _strip_trailing_period(text: str) -> str:
    text = text.strip()
    return text[:-1] if text.endswith(".") else text


def answer_key_match(answer: str, gold_answers: Iterable[str]) -> bool:
    """EXAM++ answer-key check (the workbench's ``AnswerKey2Verifier``).

    Strip a trailing period; true/false keys accept yes/correct/true resp. no/incorrect/false; otherwise compare
    stop-stemmed forms: exact if the answer's form has >= 2 characters, fuzzy ratio > 80 if >= 4, else the raw
    strings. (The upstream true/false branch crashes on a set argument; this implements its evident intent.)
    """
    golds = {_strip_trailing_period(g) for g in gold_answers}
    ans = _strip_trailing_period(answer)
    keys = {g.lower().strip() for g in golds}
    if keys == {"false"}:
        return ans.lower() in NO_WORDS
    if keys == {"true"}:
        return ans.lower() in YES_WORDS
    stemmed_golds = {stop_stem_normalize(g) for g in golds}
    stemmed = stop_stem_normalize(ans)
    if len(stemmed) >= 2 and stemmed in stemmed_golds:
        return True
    if len(stemmed) >= 4:
        return any(fuzz_ratio(stemmed, g) > 80 for g in stemmed_golds)
    return ans in golds


def parse_answer_key(text: str, gold_answers: Sequence[str]) -> Parsed:
    """Grade an extracted answer against the answer key: 1 if it matches a gold answer, else 0."""
    if not gold_answers:
        return Parsed.fail("the item has no gold answers (answer-key prompts need them)")
    if answer_key_match(text, gold_answers):
        return Parsed(1, reason="matches the answer key")
    return Parsed(0, reason="does not match the answer key")


# ------------------------------------------------------------------------------------------------ answer forms

_SCORE_KEYS = r"(?:final[ _]?score|overall[ _]?score|overall|o_score|score|o)"
_JSON_SCORE_RE = re.compile(r"[\"']?\b" + _SCORE_KEYS + r"\b[\"']?\s*[:=]\s*\**\s*([0-9])\b", re.IGNORECASE)

def parse_umbrela(text: str, labels: Mapping[str, int], parser: str = "repository") -> Parsed:
    """An answer parsed exactly as UMBRELA parses it (``parser``: ``repository``, castorini/umbrela at commit
    16cba3eb, or ``pypi-0.0.7``, the PyPI package), its fallback to grade 0 included (marked ``fallback``: counted,
    as every fallback).

    >>> labels = {str(i): i for i in range(4)}
    >>> [parse_umbrela(t, labels, "pypi-0.0.7").grade for t in ('{"O": 2}', "Final score: 3", "O: 2", "##final score: 2")]
    [2, 0, 0, 0]
    >>> [parse_umbrela(t, labels).grade for t in ('{"O": 2}', "Final score: 3", "O: 2", "##final score: 2")]
    [2, 3, 2, 2]
    """
    patterns, last = UMBRELA_PARSERS[parser]
    low = text.strip().lower()
    for pattern in patterns:
        found = list(re.finditer(pattern, low, re.IGNORECASE | re.MULTILINE | re.DOTALL))
        if found:
            label = found[-1 if last else 0].group(1)
            return Parsed(labels[label], label=label, reason=f"umbrela {parser} pattern {pattern}")
    return Parsed(0, label="0", reason=f"umbrela {parser}: no pattern -> 0", fallback=True)


def prefix_pattern(prefix: str) -> re.Pattern[str]:
    """The answer form of ``prefix`` with any spacing, case, ``#``, quotes or ``*`` around its words:
    ``##final score: `` matches ``## Final Score: **2**`` and ``final_score = 2``."""
    words = re.findall(r"[A-Za-z0-9]+", prefix)
    return re.compile(r"\b" + r"[\s_]*".join(re.escape(w) for w in words)
                      + r"\b[\"'\s*]*(?:is\s+)?[:=\-]?[\s*]*([0-9])(?![0-9])", re.IGNORECASE)


def parse_prefixed(text: str, labels: Mapping[str, int], prefix: str, *, legacy: bool = False) -> Parsed:
    r"""The label of an answer that ends in a fixed form (UMBRELA's ``##final score: N``).

    In order: the last occurrence of the prefix's form (:func:`prefix_pattern`); else the last score key of a
    JSON-like dictionary (``"O": 2``, ``'overall': 2``, ``final_score: 2``); else a bare digit rating. A digit
    outside the label set, or no form at all, is unparseable (never silently a grade). ``legacy``: UMBRELA's own
    patterns (:data:`autograde.grading.umbrela.UMBRELA_PATTERNS`), including their fallback to 0.

    >>> labels = {str(i): i for i in range(4)}
    >>> [parse_prefixed(t, labels, "##final score: ").grade for t in
    ...  ("##final score: 2", "M: 3, T: 1\n## Final Score: **1**", '{"M": 2, "T": 1, "O": 3}', "0", "final_score=2")]
    [2, 1, 3, 0, 2]
    >>> parse_prefixed("##final score: 7", labels, "##final score: ").status
    'unparseable'
    >>> parse_prefixed("no idea", labels, "##final score: ", legacy=True).grade
    0
    """
    if legacy:
        return parse_umbrela(text, labels, "repository")
    stripped = text.strip()
    if not stripped:
        return Parsed.fail("empty response")
    for reason, regex in (("answer form", prefix_pattern(prefix)), ("score key", _JSON_SCORE_RE)):
        found = list(regex.finditer(stripped))
        if found:
            label = found[-1].group(1)
            if label in labels:
                return Parsed(labels[label], label=label, reason=reason)
            return Parsed.fail(f"score {label} outside the labels {'/'.join(labels)}")
    p = parse_rating(stripped, sorted(int(k) for k in labels if k.isdigit()))
    if p.status == "ok" and p.label is not None:
        return Parsed(labels[p.label], label=p.label, reason="rating")
    return Parsed.fail(f"no '{prefix.strip()} N' in the answer")


# ------------------------------------------------------------------------------------------------ dispatcher


def parse_response(
    prompt: PromptClass,
    text: str,
    *,
    gold_answers: Sequence[str] = (),
    legacy: bool = False,
    tolerant: bool = False,
    fuzzy: bool = False,
    umbrela_parser: str | None = None,
) -> Parsed:
    """Parse a generated response to ``prompt`` by the prompt's kind and answer check (``umbrela_parser``: a prompt
    with an answer form is parsed by that UMBRELA parser, :func:`parse_umbrela`)."""
    if umbrela_parser is not None and prompt.answer_prefix:
        return parse_umbrela(text, prompt.labels, umbrela_parser)
    if prompt.kind == "extraction":
        if prompt.answer_check == "answer_key":
            return parse_answer_key(text, gold_answers)
        return parse_extraction(text, legacy=legacy, fuzzy=fuzzy)
    if prompt.answer_prefix:
        return parse_prefixed(text, prompt.labels, prompt.answer_prefix, legacy=legacy)
    return parse_labels(text, prompt.labels, legacy=legacy, tolerant=tolerant, fuzzy=fuzzy)
