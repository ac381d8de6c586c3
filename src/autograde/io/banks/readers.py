"""Readers of the bank formats (see :mod:`autograde.io.banks.formats`): each turns a file into raw query records and
reports what it could not read, with ``file:line``; :func:`detect_format` tells the format from a file's name and
first record.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from autograde.core.errors import Problems
from autograde.core.text import DuplicateKeyError, iter_lines, loads_strict
from autograde.io.banks.convert import ConversionReport, FormatError, RawItem, RawQuery, _short
from autograde.io.banks.model import item_fields

FORMATS: tuple[str, ...] = ("workbench", "tqa", "nuggetizer", "autojudge", "tsv")


JSON_LINE_FIX = "each line must be one JSON object {query_id, items: [...]}; check quotes and commas"


def _json_records(path: str, report: ConversionReport) -> list[tuple[str, Any]]:
    """(``file:line``, value) of a JSONL(.gz) file, or of a whole JSON file (a list gives one record per element)."""
    problems = Problems()
    lines = list(iter_lines(path, problems))
    for p in problems.items:
        report.reject(f"{p.path}:{p.line}" if p.line else p.path, "file", p.message, p.message, p.fix)
    text = "\n".join(line for _, line in lines).strip()
    if text.startswith("["):
        try:
            value = loads_strict(text)
        except ValueError as exc:
            raise FormatError(f"{path}: not valid JSON: {exc} (fix: check the file, or name its --from format)") from None
        assert isinstance(value, list)  # valid JSON text that starts with "[" is an array
        return [(f"{path}:element {i + 1}", v) for i, v in enumerate(value)]
    records: list[tuple[str, Any]] = []
    bad: list[tuple[int, str, str]] = []
    for n, line in lines:
        if not line.strip():
            continue
        try:
            records.append((f"{path}:{n}", loads_strict(line)))
        except DuplicateKeyError as exc:
            bad.append((n, str(exc), "keep one entry per key"))
        except json.JSONDecodeError as exc:
            bad.append((n, f"not valid JSON: {exc.msg} (column {exc.colno})", JSON_LINE_FIX))
    if bad and not records and not report.strict:  # maybe one pretty-printed JSON object
        try:
            return [(f"{path}:1", loads_strict(text))]
        except ValueError:
            pass
    for n, msg, fix in bad:
        report.reject(f"{path}:{n}", "line", msg, msg, fix)
    return records


def read_workbench(path: str, report: ConversionReport) -> list[RawQuery]:
    """The query lines of a workbench bank (``report.strict``: every malformed line or item is a problem)."""
    out = []
    for where, rec in _json_records(path, report):
        if not isinstance(rec, dict) or "query_id" not in rec or "items" not in rec:
            missing = " and ".join(k for k in ("query_id", "items") if not isinstance(rec, dict) or k not in rec)
            report.reject(where, "line", "not a workbench bank line ({query_id, items: [...]})",
                          f"the line has no {missing}", 'write {"query_id": "...", "items": [{"question_text": '
                          '"..."}, ...]} (the workbench bank format)')
            continue
        if not isinstance(rec["query_id"], str | int) or isinstance(rec["query_id"], bool):
            report.reject(where, "line", f"query_id is {type(rec['query_id']).__name__}, not a string",
                          f"query_id must be a string, got {type(rec['query_id']).__name__}",
                          'write the query id as a string: "query_id": "940547"')
            continue
        if not isinstance(rec["items"], list):
            report.reject(where, "line", "not a workbench bank line ({query_id, items: [...]})",
                          f"'items' must be a list, got {type(rec['items']).__name__}",
                          'write "items": [{"question_text": "..."}, ...]')
            continue
        qid = str(rec["query_id"])
        header = {k: (None if k == "items" else v) for k, v in rec.items()}
        items = []
        for j, raw in enumerate(rec["items"]):
            w = f"{where} (item {j})"
            if not isinstance(raw, dict):
                report.reject(w, f"query {qid!r} item {j}", "item is not a JSON object",
                              f"item {j} of query {qid!r} is not an object", "write items as JSON objects")
                continue
            fields = item_fields(raw)
            if fields is None:
                report.reject(w, f"query {qid!r} item {j}", "item has neither question_text nor nugget_text",
                              f"item {j} of query {qid!r} has neither question_text nor nugget_text",
                              "give each item a 'question_text' or a 'nugget_text'")
                continue
            kind, text, given = fields
            if raw.get("query_id") is not None and str(raw["query_id"]) != qid:
                report.reject(w, f"query {qid!r} item {_short(text)!r}",
                              f"item names another query ({raw['query_id']!r})",
                              f"item {j} names query {raw['query_id']!r} but is on the line of query {qid!r}",
                              f"move it to the line of query {raw['query_id']!r}, or correct its query_id")
                continue
            info = raw.get("info") if isinstance(raw.get("info"), dict) else None
            items.append(RawItem(text, kind, w, raw.get("gold_answers", raw.get("answers")) or (), raw.get("facet_id"),
                                 info, given))
        out.append(RawQuery(qid, header, items, where))
    return out


def read_tqa(path: str, report: ConversionReport, query_prefix: str = "") -> list[RawQuery]:
    out = []
    for where, rec in _json_records(path, report):
        if isinstance(rec, dict) and "questions" in rec and ("globalID" in rec or "lessonName" in rec):
            qid = query_prefix + str(rec.get("globalID"))
            header = {"query_id": qid, "test_collection": "tqa", "query_text": rec.get("lessonName") or "",
                      "items": None}
            qs = rec.get("questions") or {}
            items = []
            for tqa_id, q in (qs.get("nonDiagramQuestions") or {}).items():
                w = f"{where} ({tqa_id})"
                try:
                    text = q["beingAsked"]["processedText"]
                    choices = {k: v["processedText"] for k, v in (q.get("answerChoices") or {}).items()}
                    key = q["correctAnswer"]["processedText"]
                except (KeyError, TypeError):
                    report.drop(w, f"question {tqa_id}", "not a TQA question (beingAsked, answerChoices, correctAnswer)")
                    continue
                correct = choices.get(key)
                if correct is None:
                    report.drop(w, f"question {tqa_id} {_short(text)!r}", "its answer key is not among its choices")
                    continue
                items.append(RawItem(text, "question", w, [correct], None,
                                     {"tqa_id": tqa_id, "choices": choices, "correct_key": key}, None))
            for tqa_id in (qs.get("diagramQuestions") or {}):
                report.drop(f"{where} ({tqa_id})", f"question {tqa_id}", "diagram question (needs its image)")
            out.append(RawQuery(qid, header, items, where))
        elif isinstance(rec, dict) and "question" in rec and ("qid" in rec or "correct" in rec):
            qid = query_prefix + str(rec.get("query_id"))
            correct = rec.get("correct")
            if correct is None:
                report.drop(where, f"question {rec.get('qid')} {_short(rec.get('question'))!r}", "no correct answer")
                continue
            info = {"tqa_id": rec.get("qid"), "choices": rec.get("choices"), "correct_key": rec.get("correctKey")}
            header = {"query_id": qid, "test_collection": "tqa", "query_text": rec.get("query_text") or "",
                      "items": None}
            out.append(RawQuery(qid, header, [RawItem(rec["question"], "question", where, [correct],
                                                      rec.get("facet_id"), info, None)], where))
        else:
            report.drop(where, "record", "not a TQA lesson or question")
    return out


def read_nuggetizer(path: str, report: ConversionReport) -> list[RawQuery]:
    out = []
    for where, rec in _json_records(path, report):
        if not isinstance(rec, dict) or "qid" not in rec or not isinstance(rec.get("nuggets"), list):
            report.drop(where, "line", "not a nuggetizer line ({qid, query, nuggets: [...]})")
            continue
        qid = str(rec["qid"])
        header = {"query_id": qid, "test_collection": "trec-rag", "query_text": rec.get("query") or "", "items": None}
        items = []
        for j, n in enumerate(rec["nuggets"]):
            w = f"{where} (nugget {j})"
            if isinstance(n, str):
                items.append(RawItem(n, "nugget", w))
            elif isinstance(n, dict):
                info = {k: n[k] for k in ("importance",) if n.get(k) is not None}
                if info.get("importance") == "failed":  # nuggetizer's label for a failed LLM call: not an importance
                    del info["importance"]
                    report.notes["importance 'failed' (nuggetizer's failed call) not kept: the nugget has none; "
                                 "set it with bank set-importance or let nuggets.importance label it"] += 1
                extra = sorted(set(n) - {"text", "importance"})
                if extra:
                    report.notes[f"nugget fields not kept: {', '.join(extra)}"] += 1
                items.append(RawItem(n.get("text"), "nugget", w, info=info or None))
            else:
                report.drop(w, f"query {qid!r} nugget {j}", "nugget is neither text nor an object")
        out.append(RawQuery(qid, header, items, where))
    return out


def _autojudge_entries(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    return []


def read_autojudge(path: str, report: ConversionReport) -> list[RawQuery]:
    out = []
    records = _json_records(path, report)
    expanded: list[tuple[str, Any]] = []
    for where, rec in records:  # a NuggetBanks container holds its banks under "banks"
        if isinstance(rec, dict) and isinstance(rec.get("banks"), dict) and "nugget_bank" not in rec:
            expanded.extend((f"{where} ({k})", v) for k, v in rec["banks"].items())
        else:
            expanded.append((where, rec))
    for where, rec in expanded:
        if not isinstance(rec, dict) or not ({"nugget_bank", "claim_bank"} & set(rec)):
            report.drop(where, "record", "not an AutoJudge NuggetBank ({query_id, nugget_bank, claim_bank})")
            continue
        qid = str(rec.get("query_id"))
        header = {"query_id": qid, "test_collection": rec.get("test_collection") or "autojudge",
                  "query_text": rec.get("title_query") or "", "items": None}
        items = []
        for j, q in enumerate(_autojudge_entries(rec.get("nugget_bank"))):
            w = f"{where} (question {j})"
            if not isinstance(q, dict):
                report.drop(w, f"query {qid!r} question {j}", "not a NuggetQuestion object")
                continue
            answers = q.get("answers")
            gold = [a.get("answer") if isinstance(a, dict) else a for a in _autojudge_entries(answers)]
            if isinstance(answers, dict):
                gold = [a.get("answer") if isinstance(a, dict) else k for k, a in answers.items()]
            if q.get("sub_nuggets"):
                report.drop(w, f"{len(q['sub_nuggets'])} sub-nugget(s) of {_short(q.get('question'))!r}",
                            "sub-nuggets are not kept (banks are flat)")
            info = {k: q[k] for k in ("importance",) if q.get(k) is not None}
            items.append(RawItem(q.get("question"), "question", w, [g for g in gold if isinstance(g, str)],
                                 info=info or None, given_id=None))
        for j, c in enumerate(_autojudge_entries(rec.get("claim_bank"))):
            w = f"{where} (claim {j})"
            if not isinstance(c, dict):
                report.drop(w, f"query {qid!r} claim {j}", "not a NuggetClaim object")
                continue
            if c.get("sub_nuggets"):
                report.drop(w, f"{len(c['sub_nuggets'])} sub-nugget(s) of {_short(c.get('claim'))!r}",
                            "sub-nuggets are not kept (banks are flat)")
            info = {k: c[k] for k in ("importance",) if c.get(k) is not None}
            items.append(RawItem(c.get("claim"), "nugget", w, info=info or None))
        out.append(RawQuery(qid, header, items, where))
    return out


def read_tsv(path: str, report: ConversionReport, kind: str = "question") -> list[RawQuery]:
    problems = Problems()
    by_query: dict[str, RawQuery] = {}
    for n, line in iter_lines(path, problems):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{n}"
        cols = line.split("\t")
        if len(cols) < 2:
            report.drop(where, _short(line), "expected 'query_id<TAB>text'")
            continue
        if len(cols) > 2:
            report.notes["columns after the second joined into the text with spaces"] += 1
        qid = cols[0].strip()
        rq = by_query.setdefault(qid, RawQuery(qid, {"query_id": qid, "test_collection": "tsv", "items": None}, [],
                                               where))
        rq.items.append(RawItem(" ".join(c.strip() for c in cols[1:]), kind, where))
    for p in problems.items:
        report.drop(f"{p.path}:{p.line}" if p.line else p.path, "file", p.message)
    return list(by_query.values())


def _peek(path: str, n: int = 65536) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read(n)
    except FileNotFoundError:
        raise FormatError(f"{path}: file not found (fix: check the path)") from None
    except (OSError, EOFError) as exc:
        raise FormatError(f"{path}: cannot read ({exc}) (fix: check the file)") from None


def detect_format(path: str | Path) -> str:
    """The format of a bank file, from its name and first record; raises :class:`FormatError` naming the fix."""
    p = str(path)
    if p.endswith((".tsv", ".tsv.gz")):
        return "tsv"
    head = _peek(p).lstrip("\ufeff").lstrip()
    first_line = head.splitlines()[0] if head else ""
    keys: set[str] = set()
    if head.startswith("["):
        for marker, fmt in (('"globalID"', "tqa"), ('"lessonName"', "tqa"), ('"nugget_bank"', "autojudge"),
                            ('"claim_bank"', "autojudge"), ('"nuggets"', "nuggetizer"), ('"items"', "workbench")):
            if marker in head:
                return fmt
    elif head.startswith("{"):
        try:
            rec = json.loads(first_line)
            keys = set(rec) if isinstance(rec, dict) else set()
        except ValueError:
            keys = {k for k in ("items", "nugget_bank", "claim_bank", "banks", "nuggets", "globalID", "question")
                    if f'"{k}"' in head}
        if "items" in keys:
            return "workbench"
        if keys & {"nugget_bank", "claim_bank", "banks", "format_version", "title_query"}:
            return "autojudge"
        if "nuggets" in keys:
            return "nuggetizer"
        if keys & {"globalID", "lessonName"} or ("question" in keys and keys & {"qid", "correct"}):
            return "tqa"
    elif "\t" in first_line:
        return "tsv"
    raise FormatError(f"{p}: cannot tell the bank format from its first record (fix: name it with --from, one of "
                      f"{', '.join(FORMATS)})")
