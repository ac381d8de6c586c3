"""Agreement of passage labels with human judgments: confusion tables and Cohen's kappa (Dietz, SIGIR 2024, Table 5).

The labels are Rubric-Qrels labels (max grade, or number of items graded >= tau) or any qrels file; the
judgments are human qrels. Only passages with both a label and a judgment count; how many judged
passages the labels cover is reported (``n_covered`` of ``n_judged``).

At a label threshold ``t`` (the trec_eval relevance level of the labels: tau for max-mode qrels, 1 for
count mode) and a relevant judgment level ``r``:

- binary kappa: (label >= t) vs (judgment >= r), laid out as Table 5: rows label >= t / label < t,
  columns judgment >= r / judgment < r, row totals and kappa;
- linearly weighted kappa: the label is put on the judgment scale by aligning ``t`` with ``r`` (label' =
  clip(label - t + r, lowest judgment, highest judgment); e.g. max grades 5, 4, 3, <=2 become 3, 2, 1, 0
  for t=4, r=2) and compared with the judgment with weights |i - j|. Its binarization at ``r`` is exactly
  the binary view, so the two kappas describe the same cut.

Kappas come from :func:`autograde.core.agreement.cohen_kappa` (the scikit-learn definition); NaN where one side
has a single category (as scikit-learn).

>>> labels = {("q", "a"): 5, ("q", "b"): 4, ("q", "c"): 0, ("q", "d"): 2}
>>> judged = {("q", "a"): 3, ("q", "b"): 1, ("q", "c"): 0, ("q", "d"): 0, ("q", "e"): 2}
>>> res = compute_agreement(labels, judged, threshold=4, relevant_level=2)
>>> res.binary.tolist(), res.n_covered, res.n_judged, round(res.kappa, 3)
([[1, 1], [0, 2]], 4, 5, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autograde.core.agreement import cohen_kappa
from autograde.core.ids import PairKey
from autograde.io.trec import Qrels


@dataclass(frozen=True)
class Agreement:
    """One label source against the judgments at one threshold."""

    name: str
    threshold: int
    relevant_level: int
    binary: np.ndarray
    """2x2 counts: rows label >= t, label < t; columns judgment >= r, judgment < r."""
    label_bins: tuple[str, str]
    judgment_bins: tuple[str, str]
    graded: pd.DataFrame
    """Counts of every (label, judgment) value pair: index = label values, columns = judgment values."""
    kappa: float
    kappa_linear: float
    n_judged: int
    n_covered: int
    per_query: pd.DataFrame
    """query_id, n, tp, fp, fn, tn, kappa, kappa_linear (queries with at least one covered judgment)."""


def qrels_pairs(qrels: Qrels) -> dict[PairKey, int]:
    """{(query_id, doc_id): label} of a qrels dict."""
    return {(q, d): int(v) for q, docs in qrels.items() for d, v in docs.items()}


def _bin(lo: int, hi: int) -> str:
    if hi < lo:
        return "–"
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _bins(values: Sequence[int], cut: int) -> tuple[str, str]:
    """Names of the bins >= cut and < cut over the observed range (e.g. "4–5", "0–3")."""
    lo, hi = (min(values), max(values)) if len(values) else (cut, cut)
    upper = _bin(cut, hi) if hi >= cut else f"≥{cut}"
    lower = _bin(lo, cut - 1) if lo <= cut - 1 else f"<{cut}"
    return upper, lower


def aligned_labels(labels: np.ndarray, threshold: int, relevant_level: int, lo: int, hi: int) -> np.ndarray:
    """Labels on the judgment scale: threshold aligned with the relevant level, clipped to [lo, hi]."""
    return np.clip(labels - threshold + relevant_level, lo, hi)


def _kappas(lab: np.ndarray, jud: np.ndarray, threshold: int, relevant_level: int, lo: int, hi: int
            ) -> tuple[float, float]:
    if len(lab) == 0:
        return float("nan"), float("nan")
    binary = cohen_kappa((lab >= threshold).astype(int).tolist(), (jud >= relevant_level).astype(int).tolist(),
                         labels=[0, 1])
    scale = list(range(lo, hi + 1))
    linear = cohen_kappa(aligned_labels(lab, threshold, relevant_level, lo, hi).tolist(), jud.tolist(),
                         weights="linear", labels=scale)
    return binary, linear


def _counts(lab: np.ndarray, jud: np.ndarray, threshold: int, relevant_level: int) -> np.ndarray:
    a, b = lab >= threshold, jud >= relevant_level
    return np.array([[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]])


def compute_agreement(labels: Mapping[PairKey, int], judgments: Mapping[PairKey, int], threshold: int,
                      relevant_level: int, name: str = "") -> Agreement:
    """Confusion tables and kappas of ``labels`` vs ``judgments`` over the judged pairs that have a label."""
    keys = sorted(k for k in judgments if k in labels)
    lab = np.array([labels[k] for k in keys], dtype=np.int64)
    jud = np.array([judgments[k] for k in keys], dtype=np.int64)
    all_j = list(judgments.values())
    lo, hi = (min(all_j), max(all_j)) if all_j else (0, 1)
    hi = max(hi, relevant_level)
    lo = min(lo, relevant_level - 1)
    kappa, linear = _kappas(lab, jud, threshold, relevant_level, lo, hi)
    lvals = sorted(set(lab.tolist())) if len(lab) else []
    graded = pd.crosstab(pd.Series(lab, name="label"), pd.Series(jud, name="judgment")) if len(lab) else \
        pd.DataFrame(dtype="int64")
    graded = graded.reindex(index=lvals, columns=list(range(lo, hi + 1)), fill_value=0)
    rows = []
    qids = np.array([k[0] for k in keys])
    for q in sorted(set(qids.tolist())):
        m = qids == q
        c = _counts(lab[m], jud[m], threshold, relevant_level)
        kq, lq = _kappas(lab[m], jud[m], threshold, relevant_level, lo, hi)
        rows.append((q, int(m.sum()), int(c[0, 0]), int(c[0, 1]), int(c[1, 0]), int(c[1, 1]), kq, lq))
    per_query = pd.DataFrame(rows, columns=["query_id", "n", "tp", "fp", "fn", "tn", "kappa", "kappa_linear"])
    return Agreement(name=name, threshold=threshold, relevant_level=relevant_level,
                     binary=_counts(lab, jud, threshold, relevant_level),
                     label_bins=_bins(lvals, threshold), judgment_bins=_bins(list(range(lo, hi + 1)), relevant_level),
                     graded=graded, kappa=kappa, kappa_linear=linear, n_judged=len(judgments), n_covered=len(keys),
                     per_query=per_query)


def _k(x: float) -> str:
    return "–" if x != x else f"{x:.2f}"  # NaN -> dash


def table5_markdown(results: Sequence[Agreement]) -> str:
    """Layout of Table 5 of Dietz, SIGIR 2024: label bins x judgment bins, row totals, Cohen's kappa (binary, linear)."""
    if not results:
        return "_no agreement to show (no judged passage has a label)_\n"
    lines = []
    r0 = results[0]
    lines.append(f"| Label | Grade | Judgments {r0.judgment_bins[0]} | Judgments {r0.judgment_bins[1]} | Total "
                 f"| Cohen's κ | linear κ | judged covered |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for res in results:
        for i in range(2):
            name = f"{res.name} (≥{res.threshold})" if i == 0 else ""
            cov = f"{res.n_covered} of {res.n_judged}" if i == 0 else ""
            c = res.binary[i]
            lines.append(f"| {name} | {res.label_bins[i]} | {c[0]} | {c[1]} | {int(c.sum())} | {_k(res.kappa)} "
                         f"| {_k(res.kappa_linear)} | {cov} |")
    return "\n".join(lines) + "\n"


def graded_markdown(res: Agreement) -> str:
    """The full label x judgment confusion table of one result, with totals."""
    g = res.graded
    cols = list(g.columns)
    lines = [f"| label \\ judgment | {' | '.join(str(c) for c in cols)} | Total |",
             "|---:|" + "---:|" * (len(cols) + 1)]
    for lab, row in g.iterrows():
        lines.append(f"| {lab} | {' | '.join(str(int(v)) for v in row)} | {int(row.sum())} |")
    lines.append(f"| Total | {' | '.join(str(int(g[c].sum())) for c in cols)} | {int(g.to_numpy().sum())} |")
    return "\n".join(lines) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--", "≥": r"$\geq$"}


def _tex(s: str) -> str:
    """Escape text for LaTeX."""
    return "".join(_TEX.get(ch, ch) for ch in s)


def table5_latex(results: Sequence[Agreement]) -> str:
    """Table 5 as a booktabs LaTeX tabular (needs ``\\usepackage{booktabs}``)."""
    if not results:
        return "% no agreement to show (no judged passage has a label)\n"
    r0 = results[0]
    out = [r"\begin{tabular}{llrrrrr}", r"\toprule",
           r" & & \multicolumn{2}{c}{Judgments} & & & \\", r"\cmidrule(lr){3-4}",
           f"Label & Grade & {_tex(r0.judgment_bins[0])} & {_tex(r0.judgment_bins[1])} & Total & "
           r"Cohen's $\kappa$ & linear $\kappa$ \\", r"\midrule"]
    for n, res in enumerate(results):
        if n:
            out.append(r"\midrule")
        for i in range(2):
            c = res.binary[i]
            name = _tex(f"{res.name} (≥{res.threshold})") if i == 0 else ""
            out.append(f"{name} & {_tex(res.label_bins[i])} & {c[0]} & {c[1]} & {int(c.sum())} & {_k(res.kappa)} & "
                       f"{_k(res.kappa_linear)} \\\\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


SUMMARY_COLUMNS = ["name", "threshold", "relevant_level", "label_bin_high", "label_bin_low", "tp", "fp", "fn", "tn",
                   "kappa", "kappa_linear", "n_judged", "n_covered"]


def summary_table(results: Sequence[Agreement]) -> pd.DataFrame:
    """One row per result (the TSV form of Table 5)."""
    rows = [(r.name, r.threshold, r.relevant_level, r.label_bins[0], r.label_bins[1], int(r.binary[0, 0]),
             int(r.binary[0, 1]), int(r.binary[1, 0]), int(r.binary[1, 1]), r.kappa, r.kappa_linear, r.n_judged,
             r.n_covered) for r in results]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def per_query_table(results: Sequence[Agreement]) -> pd.DataFrame:
    """Per-query kappas of every result: name, threshold, query_id, n, tp, fp, fn, tn, kappa, kappa_linear."""
    frames = [r.per_query.assign(name=r.name, threshold=r.threshold) for r in results]
    cols = ["name", "threshold", "query_id", "n", "tp", "fp", "fn", "tn", "kappa", "kappa_linear"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def graded_table(results: Sequence[Agreement]) -> pd.DataFrame:
    """Long form of every graded confusion table: name, threshold, label, judgment, count."""
    rows = [(r.name, r.threshold, int(lab), int(j), int(r.graded.loc[lab, j]))
            for r in results for lab in r.graded.index for j in r.graded.columns]
    return pd.DataFrame(rows, columns=["name", "threshold", "label", "judgment", "count"])
