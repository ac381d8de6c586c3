"""The Rubric-Grading Workbench paper (Dietz, SIGIR 2024) from its released files: section 6 and Table 5.

- Section 6: the spurious test bank entries of DL20 query 940547 (items graded >= tau on passages the
  assessors judged non-relevant, most such passages first) and the relevant passages the bank misses, on the
  real FLAN-T5-large grading grid (:func:`autograde.reports.verify.spurious_entries`, ``missing_in_bank``).
- Table 5: the released prompt-class qrels against the official judgments
  (:func:`autograde.reports.agreement.compute_agreement`): counts per label bin x judgment bin and kappa.
"""

from __future__ import annotations

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.text import iter_json_objects
from autograde.io.trec import read_qrels
from autograde.reports.agreement import compute_agreement, qrels_pairs
from autograde.reports.verify import missing_in_bank, passage_label_table, spurious_entries
from autograde.reproduce.config import AgreementSettings, SpuriousSettings
from autograde.reproduce.measured import Measurement, Value

__all__ = ["MISSING_ROW", "measure_agreement", "measure_spurious", "read_grid"]

MISSING_ROW = "relevant passages without a grade >= tau"
"""Row name of the missing-in-bank count (column ``passages``)."""
GRID_FIELDS = ("query_id", "passage_id", "question_id", "question_text", "flan_t5_large_rating",
               "flan_t5_large_answer", "judgment")


def read_grid(path: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A grading grid (``dl20-rocknroll-grid/grid-full.jsonl``) as grades, judgments and items tables."""
    problems = Problems()
    rows = []
    for n, obj in iter_json_objects(path, problems):
        missing = [f for f in GRID_FIELDS if f not in obj]
        if missing:
            problems.add(path, n, f"missing field(s) {', '.join(missing)}",
                         "give one JSON object per passage x question with the fields of the grid README")
            continue
        rows.append({f: obj[f] for f in GRID_FIELDS})
    if not rows and not problems:
        problems.add(path, None, "no grid rows", "give the grid-full.jsonl of the reference data (docs/data.md says where it comes from)")
    problems.raise_if_any()
    df = pd.DataFrame(rows)
    grades = df.rename(columns={"question_id": "item_id", "flan_t5_large_rating": "grade",
                                "flan_t5_large_answer": "answer"})[["query_id", "passage_id", "item_id", "grade",
                                                                    "answer"]]
    judged = df[df["judgment"].notna()][["query_id", "passage_id", "judgment"]].drop_duplicates()
    judgments = judged.rename(columns={"judgment": "relevance"}).astype({"relevance": "int64"})
    items = df[["query_id", "question_id", "question_text"]].drop_duplicates().rename(
        columns={"question_id": "item_id", "question_text": "text"})
    return grades, judgments, items


def measure_spurious(s: SpuriousSettings) -> Measurement:
    """The ``top`` most spurious items (row: item text, column ``count``) and the missing-in-bank count."""
    grades, judgments, items = read_grid(s.grid)
    sp = spurious_entries(grades, judgments, [s.threshold], nonrelevant=s.nonrelevant,
                          relevant_level=s.relevance_level, items=items)
    values = [Value(str(r.item_text), "count", float(r.count)) for r in sp.head(s.top).itertuples()]
    labels = passage_label_table(grades, judgments, [s.threshold])
    missing = missing_in_bank(labels, grades, [s.threshold], relevant_level=s.relevance_level)
    values.append(Value(MISSING_ROW, "passages", float(len(missing))))
    n_judged = len(judgments)
    notes = [f"{labels['passage_id'].nunique()} passages x {len(items)} items; {n_judged} judged, "
             f"{int(judgments['relevance'].isin(s.nonrelevant).sum())} of them judged {s.nonrelevant} (non-relevant)",
             f"tau = {s.threshold}; relevant = judgment >= {s.relevance_level}"]
    return Measurement("workbench_spurious", values=values, notes=notes)


def measure_agreement(s: AgreementSettings) -> Measurement:
    """Per source: rows ``<label> <bin>`` (``Question 4–5``), columns judged_relevant / judged_nonrelevant /
    total / kappa / kappa_linear; plus ``<label>`` x ``covered`` (judged passages with a label)."""
    official = qrels_pairs(read_qrels(s.judgments))
    values: list[Value] = []
    notes = [f"{len(official)} judged passages; relevant = judgment >= {s.relevance_level}; label >= {s.threshold}"]
    for label, path in s.sources.items():
        r = compute_agreement(qrels_pairs(read_qrels(path)), official, threshold=s.threshold,
                              relevant_level=s.relevance_level, name=label)
        for i, bin_name in enumerate(r.label_bins):
            row = f"{label} {bin_name}"
            rel, nonrel = (int(x) for x in r.binary[i])
            values += [Value(row, "judged_relevant", float(rel)), Value(row, "judged_nonrelevant", float(nonrel)),
                       Value(row, "total", float(rel + nonrel)), Value(row, "kappa", float(r.kappa)),
                       Value(row, "kappa_linear", float(r.kappa_linear))]
        values.append(Value(label, "covered", float(r.n_covered)))
    return Measurement("workbench_agreement", values=values, notes=notes)
