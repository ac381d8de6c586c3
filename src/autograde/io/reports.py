"""Reports of the TREC RAG-family tracks as the TREC AutoJudge track reads them (RAG 24/25/26, RAGTIME, NeuCLIR,
DRAGUN): one JSON object per line, a system's report (its answer) to one topic, as sentences with citations.

Two record shapes:

- the track's ``{"metadata": {"run_id", "team_id", "topic_id" | "narrative_id" | "request_id", ...},
  "references": [...], "answer" | "responses": [{"text": ..., "citations": ...}, ...]}``;
- TREC RAG 24's first one, ``{"run_id", "topic_id", "references", "answer": [...]}``.

Three citation forms (the track specs' sentence types):

- ``rag24``: zero-based positions in the report's ``references`` (``"citations": [0, 2]``);
- ``ragtime``: a map of doc id to a score, highest first in priority (``"citations": {"doc-a": 0.9}``);
- ``neuclir``: doc ids in priority order (``"citations": ["doc-a", "doc-b"]``).

>>> rep = parse_report({"metadata": {"run_id": "r", "team_id": "t", "narrative_id": 12}, "references": ["d1", "d2"],
...     "answer": [{"text": "One.", "citations": [1]}, {"text": "Two.", "citations": []}]}, "runs.jsonl", 1, Problems())
>>> rep.run, rep.query_id, rep.forms, [cited_doc_ids(s, rep.references) for s in rep.sentences]
('r', '12', ('rag24',), [['d2'], []])
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from autograde.core.errors import Problems
from autograde.core.text import atomic_write_text, iter_json_objects

CitationForm = Literal["rag24", "ragtime", "neuclir"]
CITATION_FORMS: tuple[CitationForm, ...] = ("rag24", "ragtime", "neuclir")
"""The citation forms, as the track specs name them (``sentence_type``)."""
TOPIC_KEYS = ("topic_id", "narrative_id", "request_id")
"""Metadata keys that name a report's topic (the tracks use different ones; they must agree where several are set)."""
SENTENCE_KEYS = ("answer", "responses")
"""Top-level keys holding a report's sentences (RAG tracks: ``answer``; RAGTIME, NeuCLIR, DRAGUN: ``responses``)."""
FORMAT_FIX = ('write {"metadata": {"run_id": ..., "team_id": ..., "topic_id": ...}, "references": [...], '
              '"answer": [{"text": ..., "citations": [...]}]} (docs/autojudge.md)')


@dataclass(frozen=True)
class TrackReport:
    """One report of one run to one topic, as read (``record`` is the whole JSON object, for writing it back)."""

    path: str
    line: int
    run: str
    query_id: str
    team: str | None
    metadata: dict[str, Any]
    sentences_key: str
    sentences: list[dict[str, Any]]
    references: list[str] | None
    record: dict[str, Any]

    @property
    def forms(self) -> tuple[CitationForm, ...]:
        """The citation forms its sentences use (in :data:`CITATION_FORMS` order; none if it cites nothing)."""
        used = {citation_form(s.get("citations")) for s in self.sentences}
        return tuple(f for f in CITATION_FORMS if f in used)

    @property
    def text(self) -> str:
        """The answer as one text: the sentences joined by a space (a sentence ending in a blank line keeps it)."""
        return sentences_text(self.sentences)


def sentences_text(sentences: Sequence[Mapping[str, Any]]) -> str:
    """Concatenate report sentences; a sentence ending in a blank line keeps the paragraph break."""
    parts: list[str] = []
    for seg in sentences:
        t = str(seg.get("text", ""))
        parts.append(t if t.endswith("\n\n") else t + " ")
    return "".join(parts)


def citation_form(citations: object) -> CitationForm | Literal["none", "invalid"]:
    """The form of one sentence's ``citations``: ``none`` (absent or empty), a form of :data:`CITATION_FORMS`, or
    ``invalid`` (mixed, or not citations at all).

    >>> [citation_form(c) for c in ([0, 2], {"d": 0.5}, ["d"], [], None, [0, "d"], {"d": "high"}, [True])]
    ['rag24', 'ragtime', 'neuclir', 'none', 'none', 'invalid', 'invalid', 'invalid']
    """
    if citations is None or (isinstance(citations, list | dict) and not citations):
        return "none"
    if isinstance(citations, dict):
        ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in citations.values())
        return "ragtime" if ok else "invalid"
    if isinstance(citations, list):
        if all(isinstance(c, int) and not isinstance(c, bool) for c in citations):
            return "rag24"
        if all(isinstance(c, str) for c in citations):
            return "neuclir"
    return "invalid"


def cited_doc_ids(sentence: Mapping[str, Any], references: Sequence[str] | None) -> list[str]:
    """The doc ids one sentence cites, in priority order (a ragtime map by descending score, ties in file order);
    a rag24 position outside ``references`` cites nothing."""
    cites = sentence.get("citations")
    form = citation_form(cites)
    if form == "rag24":
        refs = list(references or [])
        return [refs[i] for i in cites if 0 <= i < len(refs)]  # type: ignore[union-attr]
    if form == "ragtime":
        return [d for d, _ in sorted(cites.items(), key=lambda kv: -float(kv[1]))]  # type: ignore[union-attr]
    if form == "neuclir":
        return list(cites)  # type: ignore[arg-type]
    return []


def _topic_id(meta: Mapping[str, Any], path: str, line: int, probs: Problems) -> str | None:
    given = {k: meta[k] for k in TOPIC_KEYS if meta.get(k) is not None}
    bad = [k for k, v in given.items() if isinstance(v, bool) or not isinstance(v, str | int)]
    if bad:
        probs.add(path, line, f"metadata.{bad[0]} must be a string or an integer, got {given[bad[0]]!r}",
                  "write the topic id as in the topics file")
        return None
    ids = {str(v) for v in given.values()}
    if not ids:
        probs.add(path, line, "the report names no topic (metadata.topic_id, narrative_id or request_id)",
                  "give metadata.topic_id (RAGTIME, NeuCLIR) or metadata.narrative_id (RAG), as the track asks")
        return None
    if len(ids) > 1:
        probs.add(path, line, "the topic ids disagree: " + ", ".join(f"{k}={v!r}" for k, v in given.items()),
                  "give the same topic id in every field that names it")
        return None
    return ids.pop()


def _sentences(rec: Mapping[str, Any], path: str, line: int, probs: Problems) -> tuple[str, list[Any]] | None:
    present = [k for k in SENTENCE_KEYS if rec.get(k) is not None]
    if not present:  # no sentences: an empty report (the track's checks call it empty_answer; ingest refuses it)
        return ("responses" if "metadata" in rec and "answer" not in rec else "answer"), []
    if len(present) == 2 and rec["answer"] != rec["responses"]:
        probs.add(path, line, "the report has both 'answer' and 'responses', and they differ",
                  "keep one of them (the track's sentences_key)")
        return None
    key = present[0] if len(present) == 1 else ("responses" if "metadata" in rec else "answer")
    value = rec[key]
    if not isinstance(value, list):
        probs.add(path, line, f"'{key}' must be a list of sentences, got {type(value).__name__}", FORMAT_FIX)
        return None
    for i, seg in enumerate(value):
        if not isinstance(seg, dict) or not isinstance(seg.get("text"), str):
            probs.add(path, line, f"{key}[{i}] is not an object with a string 'text' (got "
                      f"{type(seg.get('text') if isinstance(seg, dict) else seg).__name__})",
                      'write each sentence as {"text": "...", "citations": [...]}')
            return None
    return key, value


def parse_report(rec: dict[str, Any], path: str, line: int, probs: Problems) -> TrackReport | None:
    """One JSON object as a report, or None with the problems (shape, run, topic, sentences) added to ``probs``.

    Citations are checked separately (:func:`citation_problems`): they are not graded, the answer text is."""
    if "metadata" in rec:
        meta = rec["metadata"]
        if not isinstance(meta, dict):
            probs.add(path, line, f"'metadata' must be an object, got {type(meta).__name__}", FORMAT_FIX)
            return None
    elif "topic_id" in rec and "answer" in rec:  # TREC RAG 24's first shape: the ids at the top level
        meta = {k: rec[k] for k in ("run_id", "team_id", "topic_id") if k in rec}
    else:
        return None
    run = meta.get("run_id") if "metadata" in rec else (rec.get("run_id") or Path(path).stem)
    if not isinstance(run, str) or not run.strip():
        probs.add(path, line, f"metadata.run_id must be a non-empty string, got {run!r}",
                  "name the run in metadata.run_id (the system's name in every leaderboard)")
        return None
    qid = _topic_id(meta, path, line, probs)
    found = _sentences(rec, path, line, probs)
    if qid is None or found is None:
        return None
    refs = rec.get("references")
    if refs is not None and not (isinstance(refs, list) and all(isinstance(r, str) for r in refs)):
        probs.add(path, line, f"'references' must be a list of doc ids (strings), got {str(refs)[:60]}",
                  'write "references": ["doc-id", ...] (the documents the citations point to)')
        return None
    team = meta.get("team_id")
    return TrackReport(path, line, run, qid, team if isinstance(team, str) else None, meta, found[0], found[1], refs,
                       rec)


def is_report(rec: Mapping[str, Any]) -> bool:
    """Whether a JSON object is meant as a track report (either shape), whatever its problems."""
    return "metadata" in rec or ("topic_id" in rec and "answer" in rec)


def iter_reports(path: str | Path, probs: Problems) -> Iterator[TrackReport]:
    """The reports of one file (other records are problems), one line at a time."""
    p = str(path)
    for n, rec in iter_json_objects(p, probs, FORMAT_FIX):
        if not is_report(rec):
            probs.add(p, n, f"not a report (keys {sorted(rec)})", FORMAT_FIX)
            continue
        rep = parse_report(rec, p, n, probs)
        if rep is not None:
            yield rep


def _kind(value: object) -> str:
    """``3 (a number)``, ``'d3' (a string)``: what a malformed field holds, for a message."""
    names = {int: "a number", float: "a number", str: "a string", dict: "an object", list: "a list", bool: "a boolean"}
    return f"{value!r} ({names.get(type(value), type(value).__name__)})"[:80]


def citation_problems(rep: TrackReport, probs: Problems) -> dict[str, int]:
    """The doc ids ``rep`` cites (each with its line), adding a problem for each citation that is malformed (mixed or
    not citations) or, in the rag24 form, not a position in its references."""
    out: dict[str, int] = {}
    who = f"(run {rep.run!r}, topic {rep.query_id!r})"
    refs = rep.references or []
    for j, seg in enumerate(rep.sentences):
        cites = seg.get("citations")
        form = citation_form(cites)
        if form == "invalid":
            probs.add(rep.path, rep.line, f"'citations' of {rep.sentences_key}[{j}] {who} is {_kind(cites)}, not "
                      "citations", 'cite as positions in "references" ([0, 2]), doc ids (["doc-a"]) or doc ids with '
                      'scores ({"doc-a": 0.9}), one form per sentence')
            continue
        if form == "rag24":
            bad = [c for c in cites if not 0 <= c < len(refs)]  # type: ignore[union-attr]
            for c in bad:
                probs.add(rep.path, rep.line, f"citation {c!r} of {rep.sentences_key}[{j}] {who} is not a position "
                          f"in its {len(refs)} references",
                          "cite by position in 'references' (0 = the first), as TREC RAG 24 does")
        for d in cited_doc_ids(seg, refs):
            out.setdefault(d, rep.line)
    return out


def report_json(record: Mapping[str, Any]) -> str:
    """One report as one line, as the track's tools write it (``auto-judge-report convert``): compact JSON with
    non-ASCII kept. A file in this form reads and writes back byte for byte."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_reports(path: str | Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Write reports (JSON objects) one per line, atomically."""
    atomic_write_text(path, "".join(report_json(r) + "\n" for r in records))
