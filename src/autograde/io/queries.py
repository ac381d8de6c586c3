"""Queries: a JSON object ``{query_id: text}``, a TSV ``query_id<TAB>text``, or the TREC AutoJudge track's topics
(requests) file, JSONL ``{"request_id": ..., "title": ..., ...}`` (the title is the query text).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "topics.jsonl")
>>> _ = open(path, "w").write('{"request_id": "28", "title": "how do bees make honey", "limit": 2000}\\n')
>>> read_queries(path), read_requests(path)["28"]["limit"]
({'28': 'how do bees make honey'}, 2000)
"""

from __future__ import annotations

from pathlib import Path

from autograde.core.errors import Problems
from autograde.core.text import iter_json_objects, iter_lines, load_json_file


def query_id_problem(qid: str) -> str | None:
    """Why ``qid`` cannot be a query id (TREC run and qrels files split on whitespace), or None."""
    if not qid:
        return "the query id is empty"
    if any(c.isspace() for c in qid):
        return f"query id {qid!r} contains whitespace, which TREC run and qrels files cannot hold"
    return None


REQUEST_ID_KEYS = ("request_id", "topic_id", "narrative_id")
"""Keys of a topics (requests) line that name the topic; ``request_id`` is the track's, the others mirror it."""
REQUESTS_FIX = 'write one {"request_id": "...", "title": "the query text"} per line (the TREC AutoJudge topics file)'


def _new_id(qid: str, seen: dict, path: str, line: int, probs: Problems) -> bool:
    """Whether ``qid`` can be a new query id of the file (a problem with its line when not)."""
    why = query_id_problem(qid)
    if why:
        probs.add(path, line, why, "use ids without spaces (e.g. replace them by '_') in every input file")
        return False
    if qid in seen:
        probs.add(path, line, f"duplicate query id {qid!r}", "keep one line per query")
        return False
    return True


def read_requests(path: str | Path, problems: Problems | None = None) -> dict[str, dict]:
    """The TREC AutoJudge track's topics file (JSONL): request id -> the whole request (``title`` is the query text;
    ``limit``, ``background``, ``problem_statement``, ... as given). Ids that disagree, duplicates, ids with
    whitespace and empty titles are reported with their line."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    out: dict[str, dict] = {}
    p = str(path)
    for n, rec in iter_json_objects(p, probs, REQUESTS_FIX):
        ids = {str(rec[k]) for k in REQUEST_ID_KEYS if rec.get(k) is not None}
        if len(ids) != 1:
            probs.add(p, n, "no request_id" if not ids else f"the topic ids disagree: {sorted(ids)}", REQUESTS_FIX)
            continue
        qid = ids.pop()
        if not _new_id(qid, out, p, n, probs):
            continue
        title = rec.get("title")
        if not isinstance(title, str) or not title.strip():
            probs.add(p, n, f"request {qid!r} has no title (the query text)", "give every topic a non-empty title")
            continue
        out[qid] = rec
    if not out and not probs.items:
        probs.add(p, None, "no topics", "give at least one topic")
    if own:
        probs.raise_if_any()
    return out


def read_queries(path: str | Path, problems: Problems | None = None) -> dict[str, str]:
    """Read queries; duplicate ids, ids with whitespace and empty texts are reported with their line."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    out: dict[str, str] = {}
    p = str(path)
    if p.endswith((".jsonl", ".jsonl.gz")):
        out = {q: str(r["title"]).strip() for q, r in read_requests(p, probs).items()}
    elif p.endswith(".json"):
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
            if not _new_id(qid, out, p, n, probs):
                continue
            out[qid] = "\t".join(cols[1:]).strip()
    if not out and not probs.items:
        probs.add(p, None, "no queries", "give at least one query")
    if own:
        probs.raise_if_any()
    return out
