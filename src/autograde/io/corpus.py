"""Passage text keyed by doc id: JSONL (``doc_id``/``docid``/``id`` + ``text``/``contents``/``segment``) or TSV.

:func:`read_corpus` reads every line of every file (a full scan). The workflow looks passages up by id through
:mod:`autograde.corpus` instead, which parses single records with :func:`doc_from_json` / :func:`doc_from_tsv`
so that both agree on ids, texts and problems.

>>> doc_from_json("c.jsonl", 1, {"docid": "d1", "title": "Bees", "segment": "They make honey."}, Problems())
('d1', 'Bees\\nThey make honey.')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.text import iter_json_objects, iter_lines

ID_KEYS = ("doc_id", "docid", "id", "_id", "pid", "passage_id")
TEXT_KEYS = ("text", "contents", "passage", "body", "segment")
"""Text keys in order of preference; ``segment`` is the MS MARCO v2.1 segmented corpus of TREC RAG 24."""
JSONL_FIX = 'write one JSON object {"doc_id": ..., "text": ...} per line'
TSV_FIX = "separate the id and the text by one tab"


def is_tsv(path: str | Path) -> bool:
    """Whether a corpus file is read as TSV (``.tsv``, ``.tsv.gz``); every other file is JSONL."""
    return str(path).endswith((".tsv", ".tsv.gz"))


def join_title(title: object, text: str) -> str:
    """A passage's text with its title first (``title\\ntext``), as every reader joins them."""
    return f"{title}\n{text}" if title else text


def doc_from_json(path: str, n: int, rec: dict, probs: Problems) -> tuple[str, str] | None:
    """``(doc_id, text)`` of one JSON record; a record without id/text (or with wrong types) is a problem."""
    id_key = next((k for k in ID_KEYS if k in rec), None)
    text_key = next((k for k in TEXT_KEYS if k in rec), None)
    if id_key is None or text_key is None:
        probs.add(path, n, f"missing id or text key (have {sorted(rec)})",
                  f"use one of {ID_KEYS} for the id and one of {TEXT_KEYS} for the text")
        return None
    if not isinstance(rec[text_key], str) or not isinstance(rec[id_key], str | int):
        probs.add(path, n, f"'{id_key}' must be a string and '{text_key}' a string", "fix the record's types")
        return None
    return str(rec[id_key]), join_title(rec.get("title"), rec[text_key])


def doc_from_tsv(path: str, n: int, line: str, probs: Problems) -> tuple[str, str] | None:
    """``(doc_id, text)`` of one non-blank TSV line ``doc_id<TAB>text``."""
    cols = line.split("\t", 1)
    if len(cols) != 2:
        probs.add(path, n, "expected 'doc_id<TAB>text'", TSV_FIX)
        return None
    return cols[0].strip(), cols[1]


def _tsv_docs(path: str, probs: Problems) -> Iterator[tuple[int, str, str]]:
    for n, line in iter_lines(path, probs):
        if not line.strip():
            continue
        doc = doc_from_tsv(path, n, line, probs)
        if doc is not None:
            yield n, *doc


def _jsonl_docs(path: str, probs: Problems) -> Iterator[tuple[int, str, str]]:
    for n, rec in iter_json_objects(path, probs, JSONL_FIX):
        doc = doc_from_json(path, n, rec, probs)
        if doc is not None:
            yield n, *doc


class DocCollector:
    """Collects ``(doc_id, text)`` found in corpus files with the readers' rules: empty texts are problems, a
    repeated id with the same text counts once (a warning), with another text is a problem."""

    def __init__(self, probs: Problems) -> None:
        self.probs = probs
        self.docs: dict[str, str] = {}
        self.repeated = 0

    def add(self, path: str, n: int, doc_id: str, text: str) -> None:
        if not text.strip():
            self.probs.add(path, n, f"document {doc_id!r} has empty text", "remove it or give it text")
            return
        if doc_id in self.docs:
            if self.docs[doc_id] != text:
                self.probs.add(path, n, f"document {doc_id!r} appears twice with different text", "keep one text per id")
            else:
                self.repeated += 1
            return
        self.docs[doc_id] = text

    def finish(self) -> dict[str, str]:
        if self.repeated:
            logger.warning("corpus: %d document(s) appear more than once with the same text (kept once)", self.repeated)
        return self.docs


def read_corpus(paths: Iterable[str | Path], problems: Problems | None = None,
                wanted: set[str] | None = None) -> dict[str, str]:
    """Read passage texts from every file (a full scan); keep only ``wanted`` ids when given (saves memory)."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    found = DocCollector(probs)
    for path in paths:
        p = str(path)
        docs = _tsv_docs(p, probs) if is_tsv(p) else _jsonl_docs(p, probs)
        for n, doc_id, text in docs:
            if wanted is not None and doc_id not in wanted:
                continue
            found.add(p, n, doc_id, text)
    out = found.finish()
    if own:
        probs.raise_if_any()
    return out
