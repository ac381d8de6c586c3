"""Agreement among several assessors: Krippendorff's alpha of any number of human qrels files over the passages they
judged, missing judgments allowed (``autograde audit assessors``), with each assessor's counts and every pair's
Cohen's kappa and alpha on the passages both judged; and distinct names for input files that share a file name.

Organisers with double- or triple-judged pools ask "how far do our assessors agree?" before they ask it of a
grader: alpha is the statistic that takes every assessor at once and tolerates passages some did not judge
(:func:`autograde.core.agreement.krippendorff_alpha_data`, equal to the ``krippendorff`` package).

>>> file_names(["runs/sim/max-4.qrels", "runs/strict/max-4.qrels", "human/a.qrels"])
['sim/max-4', 'strict/max-4', 'a']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from autograde.core.agreement import AlphaLevel, cohen_kappa, krippendorff_alpha_data
from autograde.core.errors import InvalidValueError
from autograde.core.ids import PairKey

__all__ = ["ALPHA_LEVELS", "AssessorAgreement", "assessor_agreement", "assessors_markdown", "file_names"]

ALPHA_LEVELS: tuple[AlphaLevel, ...] = ("nominal", "ordinal", "interval")


def file_names(paths: Sequence[str | Path]) -> list[str]:
    """A distinct name per file: its name without the extension, with as many parent folders as it takes to tell
    files of the same name apart (``sim/max-4`` and ``strict/max-4``); the same path twice is an error."""
    parts = [Path(p).with_suffix("").parts for p in paths]
    resolved = [Path(p).resolve() for p in paths]
    for i, r in enumerate(resolved):
        if r in resolved[:i]:
            raise InvalidValueError(f"{paths[i]} is given twice (fix: give each file once)")
    depth = [1] * len(paths)
    while True:
        names = ["/".join(p[-d:]) for p, d in zip(parts, depth, strict=True)]
        clashes = {n for n in names if names.count(n) > 1}
        if not clashes:
            return names
        grown = False
        for i, n in enumerate(names):
            if n in clashes and depth[i] < len(parts[i]):
                depth[i] += 1
                grown = True
        if not grown:  # no parent left to tell them apart (different folders of the same relative path)
            return [str(Path(p).with_suffix("")) for p in paths]


@dataclass
class AssessorAgreement:
    """Alpha of all assessors at each level, the assessors' counts, and every pair's agreement."""

    alpha: dict[str, float]
    units: int
    """Passages judged by at least two assessors (the ones alpha is computed over)."""
    judged: int
    """Passages judged by at least one."""
    assessors: pd.DataFrame
    """assessor, judgments, queries, paired (its judgments of passages another assessor judged too)."""
    pairs: pd.DataFrame
    """a, b, shared (passages both judged), agree (the share with the same grade), kappa, alpha_ordinal."""


def assessor_agreement(judgments: Mapping[str, Mapping[PairKey, int]],
                       levels: Sequence[AlphaLevel] = ALPHA_LEVELS) -> AssessorAgreement:
    """Agreement of the assessors (name -> (query, passage) -> grade) over the passages they judged: alpha of all of
    them (one row per assessor, NaN where one did not judge a passage), and each pair's kappa and alpha on the
    passages both judged (NaN where undefined: fewer than two shared passages, or one grade only)."""
    names = list(judgments)
    if len(names) < 2:
        raise InvalidValueError(f"agreement needs at least two assessors, got {len(names)} (fix: give two or more "
                                "qrels files)")
    keys = sorted({k for j in judgments.values() for k in j})
    index = {k: i for i, k in enumerate(keys)}
    data = np.full((len(names), len(keys)), np.nan)
    for r, n in enumerate(names):
        for k, g in judgments[n].items():
            data[r, index[k]] = float(g)
    counts = (~np.isnan(data)).sum(axis=0)
    paired_units = counts >= 2
    if not paired_units.any():
        raise InvalidValueError(f"no passage is judged by two of the assessors ({', '.join(names)}): agreement "
                                "needs passages judged more than once (fix: give qrels files of the same pool)")
    alpha: dict[str, float] = {lv: krippendorff_alpha_data(data, lv) for lv in levels}
    assessors = pd.DataFrame([(n, len(judgments[n]), len({q for q, _ in judgments[n]}),
                               int((~np.isnan(data[r]) & paired_units).sum())) for r, n in enumerate(names)],
                             columns=["assessor", "judgments", "queries", "paired"])
    rows = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            both = ~np.isnan(data[i]) & ~np.isnan(data[j])
            a, b = data[i, both].astype(int).tolist(), data[j, both].astype(int).tolist()
            shared = len(a)
            rows.append((names[i], names[j], shared, float(np.mean(np.equal(a, b))) if shared else float("nan"),
                         cohen_kappa(a, b) if shared >= 2 else float("nan"),
                         krippendorff_alpha_data(np.vstack([data[i, both], data[j, both]]), "ordinal")
                         if shared >= 2 else float("nan")))
    pairs = pd.DataFrame(rows, columns=["a", "b", "shared", "agree", "kappa", "alpha_ordinal"])
    return AssessorAgreement(alpha, int(paired_units.sum()), len(keys), assessors, pairs)


def assessors_markdown(ag: AssessorAgreement, title: str) -> str:
    """The agreement report: alpha per level, the assessors, the pairs (3 decimals; – where undefined)."""
    from autograde.audit.report import cell
    from autograde.metrics.report import markdown_table

    alpha = markdown_table(["level", "Krippendorff's α"], [[lv, cell(v)] for lv, v in ag.alpha.items()])
    people = markdown_table(["assessor", "judgments", "queries", "judged by another too"],
                            [[r.assessor, str(r.judgments), str(r.queries), str(r.paired)]
                             for r in ag.assessors.itertuples(index=False)])
    pairs = markdown_table(["assessor", "assessor", "both judged", "same grade", "κ", "α ordinal"],
                           [[r.a, r.b, str(r.shared), cell(r.agree), cell(r.kappa), cell(r.alpha_ordinal)]
                            for r in ag.pairs.itertuples(index=False)])
    return (f"# {title}\n\n{ag.units} passage(s) judged by two or more assessors (of {ag.judged} judged by any); "
            "α is computed over them, missing judgments allowed; – where a statistic is undefined.\n\n"
            f"{alpha}\n\n## Assessors\n\n{people}\n\n## Pairs\n\n{pairs}\n")
