"""Phase 3 analyses over one grader's grades (Dietz, SIGIR 2024, sections 3.3, 4.4 and 6).

- :func:`passage_label_table`: per passage its human judgment, max grade and number of items graded >= tau
  (the rows of the grid display and the labels Rubric-Qrels exports);
- :func:`verify_lists`: per query and item, the passages with grade, extracted answer and judgment,
  highest grade first ("verify grading");
- :func:`missing_in_bank`: judged-relevant passages no item grades >= tau ("missing in test bank");
- :func:`spurious_entries`: items graded >= tau on many passages judged non-relevant, ranked per query
  ("spurious test bank entries"; by default passages judged exactly 0, as Dietz, SIGIR 2024, section 6 counts).

Grades without a usable value (unparseable / failed) never count as a grade; they are counted in
``n_failed``.

>>> import pandas as pd
>>> g = pd.DataFrame({"query_id": ["q"] * 4, "passage_id": ["a", "a", "b", "b"], "item_id": ["i", "j"] * 2,
...                   "grade": [5, 1, 4, 0]})
>>> j = pd.DataFrame({"query_id": ["q", "q"], "passage_id": ["a", "b"], "relevance": [2, 0]})
>>> spurious_entries(g, j, [4])[["item_id", "count", "judged"]].values.tolist()
[['i', 1, 1]]
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

LABEL_KEYS = ["query_id", "passage_id"]


def judgment_series(judgments: pd.DataFrame) -> pd.Series:
    """(query_id, passage_id) -> human relevance (Int64)."""
    if judgments is None or judgments.empty:
        return pd.Series([], index=pd.MultiIndex.from_arrays([[], []], names=LABEL_KEYS), dtype="Int64")
    return judgments.set_index(LABEL_KEYS)["relevance"].astype("Int64")


def _ok(grades: pd.DataFrame) -> pd.DataFrame:
    return grades[grades["grade"].notna()]


def count_column(tau: int) -> str:
    """Name of the passage-label column "number of items graded >= tau"."""
    return f"count_ge_{tau}"


def passage_label_table(grades: pd.DataFrame, judgments: pd.DataFrame, thresholds: Iterable[int]) -> pd.DataFrame:
    """One row per graded passage: query_id, passage_id, judgment, max_grade, n_items, n_failed, count_ge_<tau>.

    ``max_grade`` is the max-mode Rubric-Qrels label and ``count_ge_<tau>`` the count-mode label, computed by
    :func:`autograde.pipeline.qrels.passage_labels` (the qrels files hold exactly these); both are null for a passage none
    of whose pairs got a grade.
    """
    from autograde.pipeline.qrels import passage_labels as qrels_labels  # the labels the qrels files hold

    thresholds = sorted(set(thresholds))
    base = grades.groupby(LABEL_KEYS, sort=True).agg(n_pairs=("item_id", "size"))
    ok = _ok(grades)
    out = base.join(qrels_labels(grades, "max", 1, warn=False).rename("max_grade"))
    out = out.join(ok.groupby(LABEL_KEYS, sort=True)["grade"].size().rename("n_items"))
    for t in thresholds:
        out = out.join(qrels_labels(grades, "count", t, warn=False).rename(count_column(t)))
    out["n_items"] = out["n_items"].fillna(0).astype("int64")
    out["n_failed"] = (out.pop("n_pairs") - out["n_items"]).astype("int64")
    out["max_grade"] = out["max_grade"].astype("Int64")
    for t in thresholds:
        out[count_column(t)] = out[count_column(t)].astype("Int64")
    out = out.join(judgment_series(judgments).rename("judgment"))
    out["judgment"] = out["judgment"].astype("Int64")
    cols = ["judgment", "max_grade", "n_items", "n_failed", *(count_column(t) for t in thresholds)]
    return out[cols].reset_index()


def verify_lists(grades: pd.DataFrame, judgments: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per query and item, the passages by grade (desc; no grade last), then judgment (desc), then passage id.

    Columns: query_id, item_id, item_text, passage_id, grade, answer, judgment, parse_status.
    """
    cols = [c for c in ("query_id", "passage_id", "item_id", "grade", "answer", "parse_status") if c in grades]
    df = grades[cols].copy()
    for c in ("answer", "parse_status"):
        if c not in df:
            df[c] = None
    df["grade"] = df["grade"].astype("Int64")
    df = df.join(judgment_series(judgments).rename("judgment"), on=LABEL_KEYS)
    text = items.set_index(["query_id", "item_id"])["text"] if len(items) else pd.Series(dtype=object)
    df = df.join(text.rename("item_text"), on=["query_id", "item_id"])
    df["_g"] = df["grade"].astype("float").fillna(-1.0)
    df["_j"] = df["judgment"].astype("float").fillna(-99.0)
    df = df.sort_values(["query_id", "item_id", "_g", "_j", "passage_id"], ascending=[True, True, False, False, True],
                        kind="mergesort")
    return df[["query_id", "item_id", "item_text", "passage_id", "grade", "answer", "judgment", "parse_status"]
              ].reset_index(drop=True)


def best_items(grades: pd.DataFrame) -> pd.DataFrame:
    """Per passage the item with its highest grade (ties: smallest item id): query_id, passage_id, best_item_id."""
    ok = _ok(grades).sort_values(["query_id", "passage_id", "grade", "item_id"], ascending=[True, True, False, True],
                                 kind="mergesort")
    best = ok.drop_duplicates(LABEL_KEYS)[["query_id", "passage_id", "item_id"]]
    return best.rename(columns={"item_id": "best_item_id"})


def missing_in_bank(labels: pd.DataFrame, grades: pd.DataFrame, thresholds: Iterable[int],
                    relevant_level: int) -> pd.DataFrame:
    """Judged-relevant passages (judgment >= ``relevant_level``) with no grade >= tau on any item.

    One row per (threshold, passage): threshold, query_id, passage_id, judgment, max_grade, best_item_id.
    A passage none of whose pairs got a grade is listed too (max_grade null): no item is known to cover it.
    """
    rel = labels[labels["judgment"].notna() & (labels["judgment"] >= relevant_level)]
    rel = rel.merge(best_items(grades), on=LABEL_KEYS, how="left")
    frames = []
    for t in sorted(set(thresholds)):
        miss = rel[rel["max_grade"].isna() | (rel["max_grade"] < t)].copy()
        miss.insert(0, "threshold", t)
        frames.append(miss)
    cols = ["threshold", "query_id", "passage_id", "judgment", "max_grade", "best_item_id"]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)[cols]
    out["_m"] = out["max_grade"].astype("float").fillna(-1.0)
    out = out.sort_values(["threshold", "query_id", "judgment", "_m", "passage_id"],
                          ascending=[True, True, False, True, True], kind="mergesort")
    return out.drop(columns="_m").reset_index(drop=True)


def spurious_entries(grades: pd.DataFrame, judgments: pd.DataFrame, thresholds: Iterable[int],
                     nonrelevant: Iterable[int] = (0,), relevant_level: int = 2, min_count: int = 1,
                     items: pd.DataFrame | None = None) -> pd.DataFrame:
    """Items graded >= tau on passages judged in ``nonrelevant``, most such passages first within each query.

    Columns: threshold, query_id, rank, item_id, item_text, count (non-relevant passages graded >= tau),
    judged (non-relevant passages with a grade for the item), share (count / judged), relevant_hits
    (passages judged >= ``relevant_level`` graded >= tau), relevant_judged. Items with ``count`` below
    ``min_count`` are left out. ``rank`` is the dense rank of ``count`` within the query (1 = worst).
    """
    nonrel = set(nonrelevant)
    ok = _ok(grades)[["query_id", "passage_id", "item_id", "grade"]]
    ok = ok.join(judgment_series(judgments).rename("judgment"), on=LABEL_KEYS)
    ok = ok[ok["judgment"].notna()]
    is_nonrel = ok["judgment"].isin(nonrel)
    is_rel = ok["judgment"] >= relevant_level
    frames = []
    for t in sorted(set(thresholds)):
        hit = ok["grade"] >= t
        agg = pd.DataFrame({
            "count": (is_nonrel & hit), "judged": is_nonrel, "relevant_hits": (is_rel & hit), "relevant_judged": is_rel,
            "query_id": ok["query_id"], "item_id": ok["item_id"],
        }).groupby(["query_id", "item_id"], sort=True).sum().astype("int64").reset_index()
        agg = agg[agg["count"] >= min_count].copy()
        agg.insert(0, "threshold", t)
        frames.append(agg)
    cols = ["threshold", "query_id", "rank", "item_id", "item_text", "count", "judged", "share", "relevant_hits",
            "relevant_judged"]
    if not frames or all(f.empty for f in frames):
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)
    out["share"] = out["count"] / out["judged"].where(out["judged"] > 0)
    out["rank"] = out.groupby(["threshold", "query_id"])["count"].rank(method="dense", ascending=False).astype("int64")
    if items is not None and len(items):
        out = out.join(items.set_index(["query_id", "item_id"])["text"].rename("item_text"), on=["query_id", "item_id"])
    else:
        out["item_text"] = None
    out = out.sort_values(["threshold", "query_id", "rank", "item_id"], kind="mergesort")
    return out[cols].reset_index(drop=True)
