"""Passage text keyed by doc id: JSONL (``doc_id``/``docid``/``id`` + ``text``/``contents``) or TSV."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from autograde.errors import Problems
from autograde.io.text import iter_lines

ID_KEYS = ("doc_id", "docid", "id", "_id", "pid", "passage_id")
TEXT_KEYS = ("text", "contents", "passage", "body")


def read_corpus(paths: Iterable[str | Path], problems: Problems | None = None,
                wanted: set[str] | None = None) -> dict[str, str]:
    """Read passage texts from every file; keep only ``wanted`` ids when given (saves memory)."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    out: dict[str, str] = {}
    for path in paths:
        p = str(path)
        is_tsv = p.endswith((".tsv", ".tsv.gz"))
        for n, line in iter_lines(p, probs):
            if not line.strip():
                continue
            if is_tsv:
                cols = line.split("\t", 1)
                if len(cols) != 2:
                    probs.add(p, n, "expected 'doc_id<TAB>text'", "separate the id and the text by one tab")
                    continue
                doc_id, text = cols[0].strip(), cols[1]
            else:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    probs.add(p, n, f"not valid JSON: {exc.msg}", "write one JSON object per line")
                    continue
                if not isinstance(rec, dict):
                    probs.add(p, n, "expected a JSON object", 'write {"doc_id": ..., "text": ...}')
                    continue
                id_key = next((k for k in ID_KEYS if k in rec), None)
                text_key = next((k for k in TEXT_KEYS if k in rec), None)
                if id_key is None or text_key is None:
                    probs.add(p, n, f"missing id or text key (have {sorted(rec)})",
                              f"use one of {ID_KEYS} for the id and one of {TEXT_KEYS} for the text")
                    continue
                doc_id, text = str(rec[id_key]), str(rec[text_key])
                if "title" in rec and rec["title"]:
                    text = f"{rec['title']}\n{text}"
            if wanted is not None and doc_id not in wanted:
                continue
            if not text.strip():
                probs.add(p, n, f"document {doc_id!r} has empty text", "remove it or give it text")
                continue
            if doc_id in out and out[doc_id] != text:
                probs.add(p, n, f"document {doc_id!r} appears twice with different text", "keep one text per id")
                continue
            out[doc_id] = text
    if own:
        probs.raise_if_any()
    return out
