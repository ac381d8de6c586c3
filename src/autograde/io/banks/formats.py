"""Importing and exporting test banks: what other tools write, as our workbench-format :class:`Bank`.

Formats (``--from`` / ``--to`` of ``autograde bank import|export``; ``auto`` detects the format on import):

- ``workbench``: the Rubric-Grading Workbench's JSONL(.gz), one line per query with its ``items`` (exam questions
  with optional ``gold_answers``, or nuggets). Lines keep their other fields and order: DL20 round-trips byte for
  byte.
- ``tqa``: TQA-style question banks with answer keys: the TQA dataset's JSON (a list of lessons with
  ``globalID``, ``lessonName`` and ``questions.nonDiagramQuestions``; the correct choice is the gold answer), or the
  workbench's converted JSONL (``query_id``, ``qid``, ``question``, ``choices``, ``correctKey``, ``correct``).
- ``nuggetizer``: TREC RAG 24 nugget files (castorini nuggetizer; JSONL of ``{qid, query, nuggets: [{text,
  importance}]}``); the importance is kept in the item's ``info``.
- ``autojudge``: TREC AutoJudge NuggetBank v3 (JSONL, or one JSON object, of ``{query_id, title_query,
  nugget_bank: {text: {question, answers}}, claim_bank: {text: {claim}}}``): questions (answers are gold answers)
  and claims (nuggets).
- ``tsv``: ``query_id<TAB>text``, one item per line (``--kind`` says whether they are questions or nuggets).

Ids are always recomputed from the text (``query_id/md5(text.strip())``). Every import and export returns a
:class:`ConversionReport` that says what was dropped and why (empty texts, repeated texts, unknown queries,
diagram questions, answer keys not among the choices, fields the target format cannot hold, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from autograde.core.text import atomic_write_text
from autograde.io.banks.convert import ConversionReport, Dropped, FormatError, RawItem, RawQuery, _short, assemble
from autograde.io.banks.model import Bank, BankItem, bank_lines
from autograde.io.banks.readers import (
    FORMATS,
    detect_format,
    read_autojudge,
    read_nuggetizer,
    read_tqa,
    read_tsv,
    read_workbench,
)

Format = Literal["workbench", "tqa", "nuggetizer", "autojudge", "tsv"]
__all__ = ["FORMATS", "ConversionReport", "Dropped", "Format", "FormatError", "RawItem", "RawQuery", "assemble",
           "detect_format", "export_bank", "import_bank"]


def import_bank(path: str | Path, fmt: str = "auto", *, kind: str = "question",
                queries: dict[str, str] | None = None, queries_source: str = "the queries file",
                query_prefix: str = "", strict: bool = False) -> tuple[Bank, ConversionReport]:
    """Read a bank in any supported format; returns it with the report of what was dropped and why.

    ``strict``: refuse (one :class:`~autograde.core.errors.InputError` naming every file line) whatever a lenient
    read would drop or fix up, exactly as the workflow refuses a bank (:func:`autograde.io.banks.read.read_bank`).
    """
    p = str(path)
    fmt = detect_format(p) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise FormatError(f"unknown bank format {fmt!r} (fix: one of {', '.join(FORMATS)}, or auto)")
    if strict and fmt == "workbench":
        from autograde.io.banks.read import read_bank

        bank = read_bank(p)
        report = ConversionReport(p, fmt, queries=len(bank.by_query()), items=len(bank.items))
        return bank, report
    report = ConversionReport(p, fmt, strict=strict)
    if fmt == "workbench":
        raw = read_workbench(p, report)
    elif fmt == "tqa":
        raw = read_tqa(p, report, query_prefix)
        query_prefix = ""
    elif fmt == "nuggetizer":
        raw = read_nuggetizer(p, report)
    elif fmt == "autojudge":
        raw = read_autojudge(p, report)
    else:
        raw = read_tsv(p, report, kind)
    if query_prefix:
        for rq in raw:
            rq.query_id = query_prefix + rq.query_id
            rq.header["query_id"] = rq.query_id
    if not raw and not report.dropped and not report.problems:
        raise FormatError(f"{p}: no {fmt} records (fix: check the file, or name its format with --from)")
    bank = assemble(raw, report, queries, queries_source)
    report.problems.raise_if_any()
    return bank, report


# --------------------------------------------------------------------------------------------------------------
# Writers.


def _query_text(bank: Bank, qid: str) -> str:
    return str(bank.headers.get(qid, {}).get("query_text") or "")


Writer = Callable[[Bank, ConversionReport, list[BankItem]], str]
"""A bank writer: the file's text; it appends what it wrote to ``kept`` and reports what the format loses."""


def _write_workbench(bank: Bank, report: ConversionReport, kept: list[BankItem]) -> str:
    kept.extend(bank.items)
    return "".join(bank_lines(bank))


def _write_tsv(bank: Bank, report: ConversionReport, kept: list[BankItem]) -> str:
    rows = []
    for it in bank.items:
        if it.gold_answers:
            report.drop(it.item_id, f"{len(it.gold_answers)} gold answer(s)", "TSV holds query_id and text only")
        clean = " ".join(it.text.split())
        if clean != it.text:
            report.notes["tabs or line breaks in a text written as spaces"] += 1
        rows.append(f"{it.query_id}\t{clean}\n")
        kept.append(it)
    return "".join(rows)


def _write_nuggetizer(bank: Bank, report: ConversionReport, kept: list[BankItem]) -> str:
    lines = []
    for qid, items in bank.by_query().items():
        nuggets = []
        for it in items:
            if it.gold_answers:
                report.drop(it.item_id, f"{len(it.gold_answers)} gold answer(s)", "nuggetizer nuggets have no answers")
            n: dict[str, Any] = {"text": it.text}
            if it.info and it.info.get("importance") is not None:
                n["importance"] = it.info["importance"]
            nuggets.append(n)
            kept.append(it)
        lines.append(json.dumps({"query": _query_text(bank, qid), "qid": qid, "nuggets": nuggets},
                                ensure_ascii=False) + "\n")
    return "".join(lines)


def _write_autojudge(bank: Bank, report: ConversionReport, kept: list[BankItem]) -> str:
    lines = []
    for qid, items in bank.by_query().items():
        questions: dict[str, Any] = {}
        claims: dict[str, Any] = {}
        for it in items:
            digest = hashlib.md5(it.text.encode("utf-8")).hexdigest()
            extra = {"importance": it.info["importance"]} if it.info and it.info.get("importance") else {}
            if it.kind == "question":
                q: dict[str, Any] = {"question": it.text, "question_id": digest, "query_id": qid, **extra}
                if it.gold_answers:
                    q["answers"] = {g: {"answer": g} for g in it.gold_answers}
                questions[it.text] = q
            else:
                if it.gold_answers:
                    report.drop(it.item_id, f"{len(it.gold_answers)} gold answer(s)", "AutoJudge claims have no answers")
                claims[it.text] = {"claim": it.text, "claim_id": digest, "query_id": qid, **extra}
            kept.append(it)
        rec: dict[str, Any] = {"query_id": qid, "title_query": _query_text(bank, qid), "format_version": "v3"}
        if questions:
            rec["nugget_bank"] = questions
        if claims:
            rec["claim_bank"] = claims
        lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
    return "".join(lines)


def _write_tqa(bank: Bank, report: ConversionReport, kept: list[BankItem]) -> str:
    lessons = []
    for qid, items in bank.by_query().items():
        ndq: dict[str, Any] = {}
        for it in items:
            if it.kind != "question":
                report.drop(it.item_id, f"nugget {_short(it.text)!r}", "TQA holds questions only")
                continue
            if not it.gold_answers:
                report.drop(it.item_id, f"question {_short(it.text)!r}", "TQA questions need an answer key")
                continue
            info = it.info or {}
            choices = info.get("choices") if isinstance(info.get("choices"), dict) else None
            key = info.get("correct_key")
            if not choices or key not in choices or choices[key] != it.gold_answers[0]:
                choices, key = {"a": it.gold_answers[0]}, "a"
            if len(it.gold_answers) > 1:
                report.drop(it.item_id, f"{len(it.gold_answers) - 1} more gold answer(s)",
                            "TQA keeps one correct answer per question")
            tqa_id = str(info.get("tqa_id") or f"NDQ_{it.item_id.rsplit('/', 1)[-1][:12]}")
            ndq[tqa_id] = {"globalID": tqa_id, "beingAsked": {"processedText": it.text},
                           "answerChoices": {k: {"processedText": v} for k, v in choices.items()},
                           "correctAnswer": {"processedText": key}}
            kept.append(it)
        lessons.append({"globalID": qid, "lessonName": _query_text(bank, qid),
                        "questions": {"nonDiagramQuestions": ndq, "diagramQuestions": {}}})
    return json.dumps(lessons, ensure_ascii=False, indent=1) + "\n"


WRITERS: dict[str, Writer] = {"workbench": _write_workbench, "tqa": _write_tqa, "nuggetizer": _write_nuggetizer,
                              "autojudge": _write_autojudge, "tsv": _write_tsv}
"""format name -> its writer (the readers' registry is :data:`autograde.io.banks.readers.FORMATS`)."""


def export_bank(bank: Bank, path: str | Path, fmt: str) -> ConversionReport:
    """Write ``bank`` in ``fmt`` (``.gz`` compressed if the name says so); the report lists what the format lost."""
    p = str(path)
    if fmt not in WRITERS:
        raise FormatError(f"unknown bank format {fmt!r} (fix: one of {', '.join(FORMATS)})")
    report = ConversionReport(p, fmt)
    kept: list[BankItem] = []
    atomic_write_text(p, WRITERS[fmt](bank, report, kept))
    report.items = len(kept)
    report.queries = len({it.query_id for it in kept})
    return report
