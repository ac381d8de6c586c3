"""UMBRELA's own answer patterns, as data: the repository's parser (castorini/umbrela ``utils/common_utils.py`` at
commit 16cba3eb) and the PyPI package umbrela 0.0.7's. :func:`autograde.grading.parse.parse_umbrela` applies them
exactly as UMBRELA does (``options.umbrela_parser``, ``legacy_parse``).

>>> sorted(UMBRELA_PARSERS), len(UMBRELA_PYPI_PATTERNS)
(['pypi-0.0.7', 'repository'], 8)
"""

from __future__ import annotations

UMBRELA_PATTERNS: tuple[str, ...] = (
    r'"o"\s*[:-=]?\s*(0|1|2|3)', r"\'o\'\s*[:-=]?\s*(0|1|2|3)", r"o\s*[:-=]?\s*(0|1|2|3)",
    r'"overall_score"\s*[:-=]?\s*(0|1|2|3)', r'"overall"\s*[:-=]?\s*(0|1|2|3)', r'"overall score"\s*[:-=]?\s*(0|1|2|3)',
    r'"final score"\s*[:-=]?\s*(0|1|2|3)', r"final score\s*[:-=]?\s*(0|1|2|3)", r"final score is (0|1|2|3)",
    r'"final_score"\s*[:-=]?\s*(0|1|2|3)', r'"score"\s*[:-=]?\s*(0|1|2|3)', r'"o_score"\s*[:-=]?\s*(0|1|2|3)',
    r"output score is (0|1|2|3)", r"score is (0|1|2|3)", r"[a-zA-Z]+\s+is\s+(0|1|2|3)\s",
    r"relevance category\s*[:-=]?\s*(0|1|2|3)", r"relevance category\s*[:-=]?\s*(0|1|2|3)",
    r"relevance category is (0|1|2|3)", r"it falls into the category (0|1|2|3)", r"category\s*(0|1|2|3)",
    r"relevance category (0|1|2|3)", r"relevance category for this passage would be (0|1|2|3)",
    r"the relevance category would be (0|1|2|3)", r"\n*(0|1|2|3)",
)
"""UMBRELA's own answer patterns (castorini/umbrela ``utils/common_utils.py`` ``parse_fewshot_response`` at commit
16cba3eb), tried in order on the lower-cased answer, the last match of the first pattern that matches wins; no match
is grade 0. ``legacy_parse`` uses them as they are."""

UMBRELA_PYPI_PATTERNS: tuple[str, ...] = (
    r'"o": (0|1|2|3)', r'"overall_score": (0|1|2|3)', r'"overall": (0|1|2|3)', r'"overall score": (0|1|2|3)',
    r'"final score": (0|1|2|3)', r'"final_score": (0|1|2|3)', r'"score": (0|1|2|3)', r'"o_score": (0|1|2|3)',
)
"""The answer patterns of the PyPI package umbrela 0.0.7 (``umbrela/utils/common_utils.py``
``parse_fewshot_response``): quoted JSON keys only, tried in order on the stripped, lower-cased answer; the FIRST
match of the first pattern that matches wins; no match is grade 0 (``Final score: 3``, ``O: 2``, ``##final score: 2``
all get 0 there)."""
UMBRELA_PARSERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "repository": (UMBRELA_PATTERNS, True), "pypi-0.0.7": (UMBRELA_PYPI_PATTERNS, False)}
"""UMBRELA's parsers by name: (patterns, whether the last match of a pattern wins rather than the first)."""
