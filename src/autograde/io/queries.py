"""Queries: a JSON object ``{query_id: text}`` or a TSV ``query_id<TAB>text``."""

from __future__ import annotations

from pathlib import Path

from autograde.core.errors import Problems
from autograde.core.text import iter_lines, load_json_file


def query_id_problem(qid: str) -> str | None:
    """Why ``qid`` cannot be a query id (TREC run and qrels files split on whitespace), or None."""
    if not qid:
        return "the query id is empty"
    if any(c.isspace() for c in qid):
        return f"query id {qid!r} contains whitespace, which TREC run and qrels files cannot hold"
    return None


def read_queries(path: str | Path, problems: Problems | None = None) -> dict[str, str]:
    """Read queries; duplicate ids, ids with whitespace and empty texts are reported with their line."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    out: dict[str, str] = {}
    p = str(path)
    if p.endswith(".json"):
        data = load_json_file(p, probs, 'write {"query_id": "query text", ...}', "queries file")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            probs.add(p, None, "expected a JSON object {query_id: text}", 'write {"query_id": "query text", ...}')
            data = {}
        for qid, text in data.items():
            why = query_id_problem(str(qid))
            if why:
                probs.add(p, None, why, "use ids without spaces (e.g. replace them by '_') in every input file")
                continue
            if not isinstance(text, str) or not text.strip():
                probs.add(p, None, f"query {qid!r} has no text", "give every query a non-empty text")
                continue
            out[str(qid)] = text.strip()
    else:
        for n, line in iter_lines(p, probs):
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) < 2 or not cols[1].strip():
                probs.add(p, n, "expected 'query_id<TAB>query text'", "separate the id and the text by one tab")
                continue
            qid = cols[0].strip()
            why = query_id_problem(qid)
            if why:
                probs.add(p, n, why, "use ids without spaces (e.g. replace them by '_') in every input file")
                continue
            if qid in out:
                probs.add(p, n, f"duplicate query id {qid!r}", "keep one line per query")
                continue
            out[qid] = "\t".join(cols[1:]).strip()
    if not out and not probs.items:
        probs.add(p, None, "no queries", "give at least one query")
    if own:
        probs.raise_if_any()
    return out
