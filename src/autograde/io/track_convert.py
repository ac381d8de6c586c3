"""A report in another track's format, as the TREC AutoJudge track converts it (``auto-judge-report convert``):
citations in the track's first citation form, its references and exactly its metadata fields.

Citations are carried as (doc id, score) pairs in priority order: a ragtime map keeps its scores (ties in file
order); doc-id lists and rag24 positions get the scores 1/rank (a doc cited twice keeps its first place), which only
encode the order. Writing rag24 or neuclir drops the scores (the order stays). Where the track caps the citations of a
sentence and does not merely warn about it, the top ones are kept.

>>> from autograde.core.errors import Problems
>>> from autograde.io.reports import parse_report
>>> from autograde.io.track_specs import get_spec
>>> rep = parse_report({"metadata": {"run_id": "r", "team_id": "t", "topic_id": "7"}, "references": ["a", "b"],
...     "responses": [{"text": "One.", "citations": {"b": 0.9, "a": 0.2}}]}, "x.jsonl", 1, Problems())
>>> convert_report(rep, get_spec("kiddie"))["responses"], convert_report(rep, get_spec("rag26"))["answer"]
([{'text': 'One.', 'citations': ['b', 'a']}], [{'text': 'One.', 'citations': [1, 0]}])
"""

from __future__ import annotations

from typing import Any

from autograde.io.reports import TrackReport, citation_form, cited_doc_ids
from autograde.io.track_specs import TrackSpec


def _rank_scores(doc_ids: list[str]) -> dict[str, float]:
    """Scores 1/rank for an ordered doc-id list (the first place of a doc cited twice)."""
    return {d: 1.0 / rank for rank, d in enumerate(dict.fromkeys(doc_ids), start=1)}


def ranked_citations(sentence: dict[str, Any], references: list[str] | None) -> list[tuple[str, float]] | None:
    """One sentence's citations as (doc id, score) pairs, highest score first (ties in file order); None when it
    has no ``citations`` at all (not the same as an empty list)."""
    cites = sentence.get("citations")
    if cites is None:
        return None
    if citation_form(cites) == "ragtime":
        scores = {str(d): float(v) for d, v in cites.items()}
    else:
        scores = _rank_scores(cited_doc_ids(sentence, references))
    return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)


def _metadata(rep: TrackReport, spec: TrackSpec) -> dict[str, Any]:
    """Exactly the track's metadata fields (mandatory ones even when empty, recommended ones when given); the topic
    id under the track's field, as a string."""
    topic_fields = ("topic_id", "narrative_id", "request_id")
    out: dict[str, Any] = {}
    for key in (*spec.mandatory_metadata, *spec.recommended_metadata):
        if key in out:
            continue
        value = rep.query_id if key in topic_fields else rep.metadata.get(key)
        if value is not None or key in spec.mandatory_metadata:
            out[key] = value
    return out


def convert_report(rep: TrackReport, spec: TrackSpec) -> dict[str, Any]:
    """``rep`` as a JSON object in ``spec``'s format (write it with :func:`autograde.io.reports.write_reports`)."""
    form = spec.sentence_type[0]
    cap = spec.max_citations_per_sentence if "citation_count" not in spec.smells else None
    ranked = [ranked_citations(s, rep.references) for s in rep.sentences]
    if cap is not None:
        ranked = [r[:cap] if r is not None else None for r in ranked]
    refs: list[str] = [] if spec.references_kind == "cited_only" else list(dict.fromkeys(rep.references or []))
    position = {d: i for i, d in enumerate(refs)}
    for pairs in ranked:
        for d, _ in pairs or []:
            if d not in position:
                position[d] = len(refs)
                refs.append(d)

    def emit(pairs: list[tuple[str, float]] | None) -> Any:
        if pairs is None:
            return None
        if form == "ragtime":
            return dict(pairs)
        if form == "neuclir":
            return [d for d, _ in pairs]
        return [position[d] for d, _ in pairs]

    out: dict[str, Any] = {"metadata": _metadata(rep, spec)}
    if spec.references_kind != "none":
        out["references"] = refs
    out[spec.sentences_key] = [{"text": s["text"], "citations": emit(p)} for s, p in zip(rep.sentences, ranked,
                                                                                            strict=True)]
    return out
