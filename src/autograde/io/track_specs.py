"""The report formats of the TREC RAG-family tracks (``track_specs.yaml`` beside this module, the values of the
TREC AutoJudge track's autojudge-base 1.0.0): which citation forms, metadata, references and lengths a track's
reports must have.

>>> spec = get_spec("rag25")
>>> spec.sentence_type, spec.sentences_key, spec.topic_id_field, "length" in spec.smells
(('rag24', 'neuclir'), 'answer', 'narrative_id', True)
>>> sorted(SPEC_NAMES)[:3]
['dragun25', 'kiddie', 'rag25']
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from autograde.core.errors import UnknownNameError
from autograde.core.yamlfile import read_yaml

SPECS_FILE = Path(__file__).with_name("track_specs.yaml")
DEFAULT_SMELLS = ("empty_answer", "blank_sentence", "duplicate_topics", "references_duplicate")
"""The finding categories that only warn when a spec names none."""
CATEGORIES = ("empty_answer", "blank_sentence", "citation_format", "citation_count", "reference_index",
              "citation_score", "docid_pattern", "references_present", "references_missing", "references_duplicate",
              "references_undeclared", "references_uncited", "references_max", "metadata", "metadata_recommended",
              "run_id_length", "length", "duplicate_topics", "missing_topics", "new_topics", "narrative")
"""Every finding category of the checks (the track's names), per report then across a run's reports."""


@dataclass(frozen=True)
class TrackSpec:
    """One track's report format (the fields of ``track_specs.yaml``)."""

    track: str
    task: str
    sentence_type: tuple[str, ...]
    sentences_key: str
    topic_id_field: str
    mandatory_metadata: tuple[str, ...]
    recommended_metadata: tuple[str, ...] = ()
    require_exact_narrative: bool = False
    run_id_max_len: int | None = None
    docid_pattern: str | None = None
    collection_ids: tuple[str, ...] | None = None
    references_kind: str = "cited_only"
    references_optional: bool = False
    references_max: int | None = None
    max_citations_per_sentence: int | None = None
    length_unit: str = "words"
    length_limit: int | None = None
    length_limit_request_field: str | None = None
    smells: tuple[str, ...] = DEFAULT_SMELLS

    def severity(self, category: str, strict: bool = False) -> str:
        """``warning`` for a category the spec lists as a smell (unless ``strict``), else ``error``."""
        return "warning" if category in self.smells and not strict else "error"


def _spec(name: str, raw: dict[str, Any]) -> TrackSpec:
    known = {f.name for f in fields(TrackSpec)}
    values: dict[str, Any] = {"track": name}
    for key, value in raw.items():
        if key not in known:  # a maintainer's edit of the bundled file
            raise UnknownNameError(f"{SPECS_FILE}: spec {name!r} has unknown key {key!r}; known: {sorted(known)}")
        values[key] = tuple(value) if isinstance(value, list) else value
    bad = [s for s in values.get("smells", ()) if s not in CATEGORIES]
    if bad:
        raise UnknownNameError(f"{SPECS_FILE}: spec {name!r} names unknown smell categories {bad}")
    return TrackSpec(**values)


@functools.cache
def load_specs() -> dict[str, TrackSpec]:
    """Every bundled spec by track name."""
    raw = read_yaml(SPECS_FILE, "track specs") or {}
    return {name: _spec(name, body) for name, body in (raw.get("specs") or {}).items()}


SPEC_NAMES: tuple[str, ...] = ("dragun25", "kiddie", "rag25", "rag25-autojudge", "rag26", "ragtime25", "ragtime26")
"""The tracks of the bundled specs (a test keeps the list equal to the file)."""


def get_spec(name: str) -> TrackSpec:
    """The spec of track ``name``; an unknown name lists the known ones."""
    specs = load_specs()
    if name not in specs:
        raise UnknownNameError(f"no report format for track {name!r}; known: {', '.join(sorted(specs))} "
                               "(docs/autojudge.md)")
    return specs[name]


def length_count(texts: Sequence[str], unit: str) -> int:
    """A report's length as the track validators count it: the sentence texts joined by single spaces, then its
    whitespace-separated words, or its characters after NFKC normalization.

    >>> length_count(["Two words.", "Three more words."], "words"), length_count(["ﬁ", "x"], "chars")
    (5, 4)
    """
    joined = " ".join(texts)
    return len(joined.split()) if unit == "words" else len(unicodedata.normalize("NFKC", joined))
