"""Generated answers (TREC RAG 24 JSONL or plain ``{query_id, run, text}``) split into passages.

>>> split_answer("First paragraph.\\n\\nSecond one.", max_words=400)
['First paragraph.', 'Second one.']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograde.core.errors import Problems
from autograde.core.ids import passage_id_for_text
from autograde.core.text import iter_json_objects

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True)
class AnswerPassage:
    """One passage of one system's answer to one query; rank = position (1-based)."""

    run: str
    query_id: str
    passage_id: str
    rank: int
    text: str


def _chunk_words(text: str, max_words: int) -> list[str]:
    """Split one paragraph at sentence boundaries into chunks of at most ``max_words`` words."""
    if len(text.split()) <= max_words:
        return [text]
    chunks: list[str] = []
    current: list[str] = []
    count = 0
    for sentence in SENTENCE_END.split(text):
        words = sentence.split()
        while len(words) > max_words:  # a single over-long sentence: hard split at word boundaries
            if current:
                chunks.append(" ".join(current))
                current, count = [], 0
            chunks.append(" ".join(words[:max_words]))
            words = words[max_words:]
        if count + len(words) > max_words and current:
            chunks.append(" ".join(current))
            current, count = [], 0
        if words:
            current.append(" ".join(words))
            count += len(words)
    if current:
        chunks.append(" ".join(current))
    return chunks


def split_answer(text: str, max_words: int = 400) -> list[str]:
    """Paragraphs (blank-line separated) of at most ``max_words`` words, split at sentence ends."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if para:
            out.extend(c.strip() for c in _chunk_words(para, max_words) if c.strip())
    return out


def _rag24_text(answer: list[dict]) -> str:
    """Concatenate TREC RAG 24 answer segments; a segment ending in a blank line keeps the break."""
    parts: list[str] = []
    for seg in answer:
        t = str(seg.get("text", ""))
        parts.append(t if t.endswith("\n\n") else t + " ")
    return "".join(parts)


def _bad_segment(answer: list[object]) -> int | None:
    """Index of the first answer segment that is not an object with a string ``text``, else None."""
    for i, seg in enumerate(answer):
        if not isinstance(seg, dict) or not isinstance(seg.get("text"), str):
            return i
    return None


def read_answers(path: str | Path, max_words: int = 400, problems: Problems | None = None) -> list[AnswerPassage]:
    """Read one answers file into passages; every problem is reported with its line."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    out = list(iter_answers(path, max_words, probs))
    if own:
        probs.raise_if_any()
    return out


def iter_answer_texts(path: str | Path, probs: Problems) -> Iterator[tuple[int, str, str, str]]:
    """``(line, run, query_id, whole answer text)`` of every usable answer of one file, one line at a time; every
    problem (malformed record, second answer of a run to a query, answer without text) goes to ``probs`` with its
    line. The nugget scores use whole answers; :func:`iter_answers` splits them into passages."""
    seen: set[tuple[str, str]] = set()
    p = str(path)
    for n, rec in iter_json_objects(p, probs, "one JSON object per line; see docs/experiments.md for the answer formats"):
        if "answer" in rec and "topic_id" in rec:  # TREC RAG 24
            run = str(rec.get("run_id") or Path(p).stem)
            qid = str(rec["topic_id"])
            if not isinstance(rec["answer"], list):
                probs.add(p, n, "'answer' must be a list of {text, citations}", "see TREC RAG 24 answer format")
                continue
            bad = _bad_segment(rec["answer"])
            if bad is not None:
                probs.add(p, n, f"answer segment {bad} of run {run!r} for query {qid!r} is not an object with a "
                          f"string 'text' (got {type(rec['answer'][bad]).__name__})",
                          'write each segment as {"text": "...", "citations": [...]}')
                continue
            text = _rag24_text(rec["answer"])
        elif "query_id" in rec and "text" in rec:
            run = str(rec.get("run") or rec.get("run_id") or Path(p).stem)
            qid = str(rec["query_id"])
            if not isinstance(rec["text"], str):
                probs.add(p, n, f"'text' of run {run!r} for query {qid!r} must be a string, got "
                          f"{type(rec['text']).__name__}", "write the answer as one string")
                continue
            text = rec["text"]
        else:
            probs.add(p, n, f"unknown answer record with keys {sorted(rec)}",
                      "use TREC RAG 24 {run_id, topic_id, answer: [{text, citations}]} or {query_id, run, text}")
            continue
        if (run, qid) in seen:
            probs.add(p, n, f"second answer of run {run!r} for query {qid!r}", "keep one answer per run and query")
            continue
        seen.add((run, qid))
        if not text.strip():
            probs.add(p, n, f"empty answer of run {run!r} for query {qid!r}", "remove the line or give it text")
            continue
        yield n, run, qid, text


def iter_answers(path: str | Path, max_words: int, probs: Problems) -> Iterator[AnswerPassage]:
    """The passages of one answers file, one answer line at a time (a file of thousands of answers is never held
    whole); every problem goes to ``probs`` with its line."""
    for _, run, qid, text in iter_answer_texts(path, probs):
        used: set[str] = set()
        rank = 0
        for piece in split_answer(text, max_words):
            pid = passage_id_for_text(piece)
            if pid in used:  # the same paragraph twice in one answer counts once
                continue
            used.add(pid)
            rank += 1
            yield AnswerPassage(run, qid, pid, rank, piece)


def _kind(value: object) -> str:
    """``3 (a number)``, ``'d3' (a string)``: what a malformed field holds, for a message."""
    names = {int: "a number", float: "a number", str: "a string", dict: "an object", list: "a list", bool: "a boolean"}
    return f"{value!r} ({names.get(type(value), type(value).__name__)})"[:80]


def answer_citations(path: str | Path, problems: Problems) -> dict[str, int]:
    """The doc ids a TREC RAG 24 answers file cites, each with the first line citing it.

    A citation is an index into the record's ``references`` (the TREC RAG 24 format); one that is not (not an
    int, or out of range) is a problem naming the line. Records of other formats cite nothing.
    """
    p = str(path)
    out: dict[str, int] = {}
    for n, rec in iter_json_objects(p, Problems(), ""):  # format problems come from read_answers
        refs = rec.get("references")
        answer = rec.get("answer")
        if not isinstance(answer, list):
            continue
        who = f"(run {rec.get('run_id')!r}, query {rec.get('topic_id')!r})"
        if refs is not None and not (isinstance(refs, list) and all(isinstance(r, str) for r in refs)):
            problems.add(p, n, f"'references' {who} must be a list of doc ids (strings), got {_kind(refs)}",
                         'write "references": ["doc-id", ...] (the documents the citations point to)')
            refs = []
        refs = refs if isinstance(refs, list) else []
        for j, seg in enumerate(answer):
            cites = seg.get("citations") if isinstance(seg, dict) else None
            if cites is not None and not isinstance(cites, list):
                problems.add(p, n, f"'citations' of answer segment {j} {who} must be a list of indexes into "
                             f"'references', got {_kind(cites)}", 'write "citations": [0, 2] (or [] for none)')
                continue
            for c in cites if isinstance(cites, list) else []:
                if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < len(refs):
                    problems.add(p, n, f"citation {c!r} of answer segment {j} (run {rec.get('run_id')!r}, query "
                                 f"{rec.get('topic_id')!r}) is not an index into its {len(refs)} references",
                                 "cite by position in 'references' (0 = the first), as TREC RAG 24 does")
                    continue
                out.setdefault(str(refs[c]), n)
    return out
