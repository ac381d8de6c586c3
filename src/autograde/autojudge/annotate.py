"""Human judgments from the TREC AutoJudge track's annotation page (autojudge-annotate 0.3.7), and autograde's judging
worklist as that page's input.

The page exports JSONL, one record per annotation, of three kinds (its ``Reports``, ``Documents`` and ``Citations``
modes), each with a ``rating`` of ``Perfect``, ``Mostly Good``, ``So-so``, ``Bad`` (or ``Not rated``):

- a **document** record (``docid``, ``topic_id``) judges one document (a passage) for a topic: a passage judgment,
  a line of qrels (the human-sample estimates and the agreement reports read them);
- a **report** record (``run_id``, ``topic_id``) judges one run's whole answer to a topic: a per-topic value of the
  run, a human leaderboard (the judge audit's system agreement and ``meta-evaluate`` read it);
- a **citation** record judges whether a document supports one sentence: not a relevance judgment, left out
  (counted).

The grades of the ratings are :data:`RATING_GRADES` (``scale`` to change them). An annotation without a rating is left
out (counted); two annotators who rate the same thing differently are a problem naming both lines (fix: choose one
annotator). autograde's worklist (``autograde sample draw``) opens in the page as reports whose documents are the
passages to judge (:func:`worklist_reports`, the page's ``Documents`` mode); the export then imports as the sample's
qrels. The page of autojudge-annotate 0.3.7 records no rating as it is: its annotation handlers name a variable nothing
defines (``supabaseClient``, template_js_main.py), so every render stops with a ReferenceError before the rating,
comment and output handlers are attached; :func:`fix_annotate_page` defines it (the page then works offline).

>>> rec = {"topic_id": "q1", "docid": "d7", "rating": "Mostly Good", "username": "ann"}
>>> imp = annotation_judgments([(1, rec)], "export.jsonl")
>>> imp.passages, imp.skipped
({'q1': {'d7': 2}}, {})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.text import iter_json_objects
from autograde.io.trec import Qrels

RATING_GRADES: dict[str, int] = {"Perfect": 3, "Mostly Good": 2, "So-so": 1, "Bad": 0}
"""The page's ratings as grades (0-3, the TREC RAG and UMBRELA scale)."""
NOT_RATED = "Not rated"
REPORT_MEASURE = "human_rating"
"""The measure name of the report judgments as a leaderboard."""


@dataclass
class AnnotationImport:
    """What an export holds as judgments: passage qrels, per-topic report grades, and what was left out and why."""

    passages: Qrels = field(default_factory=dict)
    reports: dict[tuple[str, str], int] = field(default_factory=dict)
    """(run, topic) -> grade."""
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def report_table(self) -> pd.DataFrame:
        """The report judgments as a per-topic leaderboard (run, query_id, measure, value), each run's ``all`` the
        mean over the topics rated for it."""
        rows = [(r, q, REPORT_MEASURE, float(g)) for (r, q), g in sorted(self.reports.items())]
        table = pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])
        if table.empty:
            return table
        means = table.groupby("run", sort=True)["value"].mean().reset_index()
        return pd.concat([table, means.assign(query_id="all", measure=REPORT_MEASURE)[table.columns]],
                         ignore_index=True)


def _kind(rec: Mapping[str, Any]) -> str:
    if isinstance(rec.get("citation"), dict):
        return "citation"
    if "docid" in rec:
        return "document"
    if "run_id" in rec:
        return "report"
    return "unknown"


def annotation_judgments(records: Iterable[tuple[int, Mapping[str, Any]]], path: str,
                         scale: Mapping[str, int] | None = None, username: str | None = None,
                         dataset: str | None = None, problems: Problems | None = None) -> AnnotationImport:
    """The judgments of export records ``(line, record)``; conflicting ratings go to ``problems``."""
    grades = dict(scale or RATING_GRADES)
    probs = problems if problems is not None else Problems()
    out = AnnotationImport()
    seen: dict[tuple[str, str, str], tuple[int, int, str]] = {}  # (kind, topic, id) -> (grade, line, user)
    for n, rec in records:
        if username is not None and rec.get("username") != username:
            out.skip("another annotator")
            continue
        if dataset is not None and rec.get("dataset") != dataset:
            out.skip("another dataset")
            continue
        kind = _kind(rec)
        if kind == "citation":
            out.skip("citation support (not a relevance judgment)")
            continue
        if kind == "unknown":
            probs.add(path, n, f"not an annotation record of the page (keys {sorted(rec)})",
                      "import the page's JSONL export (Download JSONL, or autojudge-annotate export-db)")
            continue
        rating = rec.get("rating")
        if rating == NOT_RATED or rating is None:
            out.skip("no rating")
            continue
        if rating not in grades:
            probs.add(path, n, f"rating {rating!r} has no grade (known: {', '.join(grades)})",
                      "give its grade with --scale 'Rating=grade,...'")
            continue
        topic = str(rec.get("topic_id") or rec.get("request_id") or "")
        ident = str(rec["docid"] if kind == "document" else rec["run_id"])
        key, grade, user = (kind, topic, ident), grades[rating], str(rec.get("username") or "")
        if key in seen and seen[key][0] != grade:
            g0, line0, user0 = seen[key]
            probs.add(path, n, f"{kind} {ident!r} of topic {topic!r} is rated {grade} here by {user!r} and {g0} on "
                      f"line {line0} by {user0!r}", "import one annotator's judgments (--username), or remove one line")
            continue
        seen[key] = (grade, n, user)
        if kind == "document":
            out.passages.setdefault(topic, {})[ident] = grade
        else:
            out.reports[(ident, topic)] = grade
    return out


def read_annotations(path: str | Path, scale: Mapping[str, int] | None = None, username: str | None = None,
                     dataset: str | None = None, problems: Problems | None = None) -> AnnotationImport:
    """An autojudge-annotate JSONL export as judgments; every problem with its line (raised unless ``problems``)."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    p = str(path)
    out = annotation_judgments(iter_json_objects(p, probs, "import the page's JSONL export"), p, scale, username,
                               dataset, probs)
    if own:
        probs.raise_if_any()
    return out


def parse_scale(text: str) -> dict[str, int]:
    """``'Perfect=3,Mostly Good=2,So-so=1,Bad=0'`` as a rating -> grade map.

    >>> parse_scale("Perfect=2, Mostly Good=2,So-so=1,Bad=0")["Perfect"]
    2
    """
    from autograde.core.errors import InvalidValueError

    out: dict[str, int] = {}
    for part in text.split(","):
        name, sep, grade = part.partition("=")
        if not sep or not grade.strip().lstrip("-").isdigit():
            raise InvalidValueError(f"--scale: {part.strip()!r} is not 'Rating=grade' (fix: e.g. "
                                    "'Perfect=3,Mostly Good=2,So-so=1,Bad=0')")
        out[name.strip()] = int(grade)
    return out


def worklist_reports(worklist: pd.DataFrame, team: str = "autograde") -> tuple[list[dict], list[dict]]:
    """A judging worklist (columns round, query_id, passage_id, query, passage) as the page's input: the topics
    (requests) and, per topic, one report of run ``worklist-<round>`` whose documents are the passages to judge (one
    sentence per passage, citing it). Judge them in the page's ``Documents`` mode."""
    topics: dict[str, dict] = {}
    reports: dict[tuple[str, str], dict] = {}
    for r in worklist.itertuples(index=False):
        qid, pid, text = str(r.query_id), str(r.passage_id), str(r.passage)
        topics.setdefault(qid, {"request_id": qid, "title": str(r.query)})
        run = f"worklist-{int(r.round)}"
        rep = reports.setdefault((run, qid), {"metadata": {"team_id": team, "run_id": run, "topic_id": qid},
                                              "references": [], "responses": [], "documents": {}})
        rep["references"].append(pid)
        rep["responses"].append({"text": text, "citations": [pid]})
        rep["documents"][pid] = {"id": pid, "text": text}
    return list(topics.values()), list(reports.values())


def read_worklist(path: str | Path) -> pd.DataFrame:
    """A worklist TSV of ``autograde sample draw`` (query and passage ids as strings)."""
    return pd.read_csv(path, sep="\t", dtype={"query_id": str, "passage_id": str, "query": str, "passage": str},
                       keep_default_na=False)



PAGE_FIX = "<script>var supabaseClient = null;  /* autograde: the page names it but never defines it */</script>\n"
PAGE_SCRIPT = "<script>\n(function() {"


def fix_annotate_page(path: str | Path) -> bool:
    """Define the variable autojudge-annotate 0.3.7's page names but never defines (before its script), so its rating,
    comment and output handlers work; False when the page needs no fix (already fixed, or a page without the flaw)."""
    from autograde.core.errors import InvalidValueError
    from autograde.core.text import atomic_write_text

    html = Path(path).read_text(encoding="utf-8")
    if PAGE_FIX in html or "supabaseClient" not in html or "var supabaseClient" in html:
        return False
    if PAGE_SCRIPT not in html:
        raise InvalidValueError(f"{path}: not a page of autojudge-annotate generate (fix: name the page it wrote)")
    atomic_write_text(path, html.replace(PAGE_SCRIPT, PAGE_FIX + PAGE_SCRIPT, 1))
    return True
