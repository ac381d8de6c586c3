"""Generated answers (the TREC RAG-family reports of :mod:`autograde.io.reports`, or plain ``{query_id, run, text}``)
split into passages.

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
from autograde.io.reports import citation_problems, is_report, parse_report

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
        if is_report(rec):  # a TREC RAG-family report (docs/autojudge.md)
            rep = parse_report(rec, p, n, probs)
            if rep is None:
                continue
            run, qid, text = rep.run, rep.query_id, rep.text
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
                      "use a TREC RAG report {metadata: {run_id, topic_id}, answer: [{text, citations}]} (also "
                      "RAG 24's {run_id, topic_id, answer}) or {query_id, run, text}")
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


def answer_citations(path: str | Path, problems: Problems) -> dict[str, int]:
    """The doc ids an answers file cites, each with the first line citing it.

    Every citation form of the track reports counts (:mod:`autograde.io.reports`); a malformed citation, or a rag24
    position outside the record's ``references``, is a problem naming the line. Records of other formats cite nothing.
    """
    p = str(path)
    out: dict[str, int] = {}
    for n, rec in iter_json_objects(p, Problems(), ""):  # format problems come from read_answers
        if not is_report(rec):
            continue
        rep = parse_report(rec, p, n, Problems())
        if rep is None:  # its shape problems (references included) come from read_answers
            continue
        for doc_id, line in citation_problems(rep, problems).items():
            out.setdefault(doc_id, line)
    return out
