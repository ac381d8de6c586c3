"""The checks of a track's report format (:mod:`autograde.io.track_specs`), as the TREC AutoJudge track runs them
(``auto-judge-report check``), each finding with its file, line and fix: per report (metadata, citation forms and
counts, doc id patterns, references, length) and across one run's reports (missing, new and repeated topics, the
narrative copied from the topic). A category the spec lists as a smell is a warning, every other an error.

The cross-report checks are per run (the track's tool checks one submission, one run, at a time).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograde.core.errors import Problems
from autograde.io.reports import TrackReport, citation_form, cited_doc_ids, iter_reports
from autograde.io.track_specs import TrackSpec, length_count

FIXES = {
    "empty_answer": "give the report at least one sentence with text (or leave the topic out where the track allows)",
    "blank_sentence": "remove the sentence without text",
    "citation_format": "cite in a form the track accepts (see its sentence_type in docs/autojudge.md)",
    "citation_count": "cite at most the track's number of documents per sentence",
    "reference_index": "cite by position in 'references' (0 = the first)",
    "citation_score": "give every cited doc id a numeric score",
    "docid_pattern": "cite doc ids of the track's collection",
    "references_present": "remove 'references' (the track cites doc ids directly)",
    "references_missing": "add 'references': the documents the report cites",
    "references_duplicate": "list each document once in 'references'",
    "references_undeclared": "add every cited document to 'references'",
    "references_uncited": "cite every document of 'references', or drop it from there",
    "references_max": "list at most the track's number of references",
    "metadata": "fill in the metadata field the track requires",
    "metadata_recommended": "fill in the metadata field the track recommends",
    "run_id_length": "shorten the run id",
    "length": "shorten the report to the track's limit",
    "duplicate_topics": "keep one report per topic in a run",
    "missing_topics": "add a report for every topic of the topics file",
    "new_topics": "report only on topics of the topics file",
    "narrative": "copy the topic's title into metadata.narrative exactly",
}
"""How to fix each finding category."""


@dataclass(frozen=True)
class Finding:
    """One finding of the checks: its category, whether it fails (``error``) or warns, where, and what."""

    category: str
    severity: str
    path: str
    line: int | None
    run: str
    query_id: str | None
    message: str

    @property
    def fix(self) -> str:
        return FIXES[self.category]


def _meta_value(rep: TrackReport, key: str) -> Any:
    """A metadata field as the track's report model sees it (every topic id field holds the report's topic)."""
    if key in ("topic_id", "narrative_id", "request_id"):
        return rep.query_id
    return rep.metadata.get(key)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _form_of(rep: TrackReport) -> str:
    """The report's citation form as the track's report model types it: its sentences' one form (neuclir when none
    cites anything)."""
    forms = {citation_form(s.get("citations")) for s in rep.sentences} - {"none"}
    return forms.pop() if len(forms) == 1 else ("neuclir" if not forms else "invalid")


class _Checker:
    def __init__(self, rep: TrackReport, spec: TrackSpec, request: Mapping[str, Any] | None, strict: bool) -> None:
        self.rep, self.spec, self.request, self.strict = rep, spec, request, strict
        self.found: list[Finding] = []

    def add(self, category: str, message: str) -> None:
        r = self.rep
        self.found.append(Finding(category, self.spec.severity(category, self.strict), r.path, r.line, r.run,
                                  r.query_id, f"{self.spec.track}: {message}"))

    def run(self) -> list[Finding]:
        sents, key = self.rep.sentences, self.spec.sentences_key
        if not sents:
            self.add("empty_answer", f"empty {key} (no sentences)")
        elif all(not str(s.get("text", "")).strip() for s in sents):
            self.add("empty_answer", f"empty {key} (every sentence is blank)")
        else:
            self.metadata()
            self.sentences()
            self.references()
            self.length()
        return self.found

    def metadata(self) -> None:
        spec, rep = self.spec, self.rep
        for k in spec.mandatory_metadata:
            if _blank(_meta_value(rep, k)):
                self.add("metadata", f"metadata.{k} is required but missing or empty")
        for k in spec.recommended_metadata:
            if _blank(_meta_value(rep, k)):
                self.add("metadata_recommended", f"metadata.{k} is recommended but missing or empty")
        if spec.run_id_max_len is not None and len(rep.run) > spec.run_id_max_len:
            self.add("run_id_length", f"run id {rep.run!r} has {len(rep.run)} characters, over the "
                     f"{spec.run_id_max_len}-character limit")

    def sentences(self) -> None:
        spec, rep, key = self.spec, self.rep, self.spec.sentences_key
        form = _form_of(rep)
        refs = rep.references or []
        pattern = re.compile(spec.docid_pattern) if spec.docid_pattern else None
        for i, s in enumerate(rep.sentences):
            if form not in spec.sentence_type:
                self.add("citation_format", f"{key}[{i}] cites in the {form} form, which the track does not accept "
                         f"(accepted: {', '.join(spec.sentence_type)})")
                continue
            if not str(s.get("text", "")).strip():
                self.add("blank_sentence", f"{key}[{i}] has no text")
            cites = s.get("citations")
            n = len(cites) if isinstance(cites, list | dict) else 0
            if spec.max_citations_per_sentence is not None and n > spec.max_citations_per_sentence:
                self.add("citation_count", f"{key}[{i}] has {n} citations (at most {spec.max_citations_per_sentence})")
            if form == "rag24":
                for c in cites or []:
                    if not 0 <= c < len(refs):
                        self.add("reference_index", f"{key}[{i}] cites position {c!r}, not one of the "
                                 f"{len(refs)} references")
            if pattern is not None:
                for d in cited_doc_ids(s, refs):
                    if not pattern.match(d):
                        self.add("docid_pattern", f"cited doc id {d!r} is not a doc id of the collection "
                                 f"(pattern {spec.docid_pattern})")

    def references(self) -> None:
        spec, rep = self.spec, self.rep
        if spec.references_kind == "ignore":
            return
        refs = rep.references
        cited = {d for s in rep.sentences for d in cited_doc_ids(s, refs)}
        if spec.references_kind == "none":
            if refs:
                self.add("references_present", "the track uses no references, but the report has them")
            return
        if spec.references_optional and not refs:
            return
        if refs is None:
            self.add("references_missing", "the track requires references, but the report has none")
            return
        if len(set(refs)) != len(refs):
            self.add("references_duplicate", "references list a document more than once")
        if spec.docid_pattern:
            pattern = re.compile(spec.docid_pattern)
            for d in refs:
                if not pattern.match(d):
                    self.add("docid_pattern", f"reference {d!r} is not a doc id of the collection "
                             f"(pattern {spec.docid_pattern})")
        uncited = sorted(set(refs) - cited)
        if spec.references_kind == "cited_only":
            undeclared = sorted(cited - set(refs))
            if undeclared:
                self.add("references_undeclared", f"{len(undeclared)} cited document(s) are not in references "
                         f"(e.g. {undeclared[0]!r})")
            if uncited:
                self.add("references_uncited", f"{len(uncited)} reference(s) are never cited (e.g. {uncited[0]!r})")
        elif spec.references_kind == "retrieval_list":
            if not cited <= set(refs):
                self.add("references_undeclared", "some cited documents are not in references")
            if spec.references_max is not None and len(refs) > spec.references_max:
                self.add("references_max", f"{len(refs)} references (at most {spec.references_max})")
            if uncited:
                self.add("references_uncited", f"{len(uncited)} reference(s) are never cited (e.g. {uncited[0]!r})")

    def length(self) -> None:
        spec = self.spec
        texts = [str(s["text"]) for s in self.rep.sentences if isinstance(s.get("text"), str)]
        limit = spec.length_limit
        if limit is None and spec.length_limit_request_field is not None:
            if self.request is None:
                return  # the topic's own limit, without the topic: not checked (as the track's tool)
            limit = self.request.get(spec.length_limit_request_field)
        count = length_count(texts, spec.length_unit)
        if limit is not None and count > limit:
            self.add("length", f"the report has {count} {spec.length_unit} (limit {limit})")


def check_report(rep: TrackReport, spec: TrackSpec, request: Mapping[str, Any] | None = None,
                 strict: bool = False) -> list[Finding]:
    """The findings of one report (``request``: its topic, for a per-topic length limit)."""
    return _Checker(rep, spec, request, strict).run()


def check_run(reports: list[TrackReport], spec: TrackSpec, requests: Mapping[str, Mapping[str, Any]] | None = None,
              strict: bool = False) -> list[Finding]:
    """Every finding of one run's reports: each report's, then the run's topics against the topics file
    (``requests``: request id -> request; without it, only repeated topics)."""
    found = [f for r in reports for f in check_report(r, spec, (requests or {}).get(r.query_id), strict)]
    if not reports:
        return found
    first = reports[0]

    def add(category: str, message: str, line: int | None = None) -> None:
        found.append(Finding(category, spec.severity(category, strict), first.path, line, first.run, None,
                             f"{spec.track}: {message}"))

    topics = [r.query_id for r in reports]
    if requests:
        missing = sorted(set(requests) - set(topics))
        new = sorted(set(topics) - set(requests))
        if missing:
            add("missing_topics", f"run {first.run!r} has no report for {len(missing)} topic(s): "
                f"{', '.join(missing[:12])}")
        if new:
            add("new_topics", f"run {first.run!r} reports on {len(new)} topic(s) not in the topics file: "
                f"{', '.join(new[:12])}")
    repeated = sorted(q for q, n in Counter(topics).items() if n > 1)
    if repeated:
        line = [r.line for r in reports if r.query_id == repeated[0]][1]
        add("duplicate_topics", f"run {first.run!r} reports more than once on {len(repeated)} topic(s): "
            f"{', '.join(repeated[:12])}", line)
    if requests and spec.require_exact_narrative:
        off = [r for r in reports if r.query_id in requests
               and r.metadata.get("narrative") != requests[r.query_id].get("title")]
        if off:
            add("narrative", f"metadata.narrative of {len(off)} report(s) is not the topic's title (topics "
                f"{', '.join(sorted({r.query_id for r in off})[:12])})", off[0].line)
    return found


def check_report_files(paths: Iterable[str | Path], spec: TrackSpec,
                       requests: Mapping[str, Mapping[str, Any]] | None, problems: Problems,
                       strict: bool = False) -> list[Finding]:
    """Read report files and check every run against ``spec``: reading problems and error findings go to
    ``problems`` (file, line, fix); every finding (warnings too) is returned."""
    by_run: dict[str, list[TrackReport]] = {}
    for path in paths:
        for rep in iter_reports(path, problems):
            by_run.setdefault(rep.run, []).append(rep)
    found = [f for run in sorted(by_run) for f in check_run(by_run[run], spec, requests, strict)]
    for f in found:
        if f.severity == "error":
            problems.add(f.path, f.line, f.message, f.fix)
    return found
