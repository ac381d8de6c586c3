"""Features of calibrated relevance labels: several graders' outputs per (query, passage), encoded the same way
at training time and when a saved model labels a new collection.

The inputs of a passage are several graders' outputs (beyond the papers):

- a TREC qrels file per grader (the integer label of a direct prompt, or the max item grade of a bank,
  as the workbench exports them), encoded one-hot and/or as a thermometer (label >= k);
- a grades parquet: every grader in it is a source; its label is the max grade
  (:func:`autograde.pipeline.qrels.passage_labels`); bank graders also give the share of the query's items graded >= the
  count threshold, and graders with logits scoring the mean distribution over items.

A source is known by its name (a qrels file's name without extension, a grader's name), and the encoding of
each source (its labels, whether some passages lack it, its numeric features) is fixed when a model is fitted
(:class:`SourceEncoding`) and stored with it: a new collection's sources are encoded with the training
encodings, matched by name.

>>> enc = SourceEncoding("sun", "qrels", (0, 1), False, ())
>>> enc.columns("both")
['sun=0', 'sun=1', 'sun>=1']
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from autograde.core.errors import Problems
from autograde.core.ids import PairKey
from autograde.core.log import logger
from autograde.io.trec import read_qrels_with_lines
from autograde.pipeline.qrels import passage_labels

__all__ = ["RelevanceFeatures", "SourceData", "SourceEncoding", "check_against", "encode", "features_from_sources",
           "read_sources"]

Encoding = Literal["onehot", "ordinal", "both"]


@dataclass
class SourceData:
    """One source's outputs: integer label per (query, passage) and optional numeric features."""

    name: str
    kind: Literal["qrels", "grades"]
    path: str
    labels: dict[PairKey, int]
    extra: dict[PairKey, list[float]] = field(default_factory=dict)
    extra_names: tuple[str, ...] = ()
    lines: dict[PairKey, int] = field(default_factory=dict)
    """The line of each label in its file (a qrels source), for problems that name one."""

    def first_line(self, label: int) -> int | None:
        """The first line holding ``label`` (None for a grades table, whose rows have no line)."""
        found = [self.lines[k] for k, v in self.labels.items() if v == label and k in self.lines]
        return min(found) if found else None


@dataclass(frozen=True)
class SourceEncoding:
    """How one source becomes feature columns: the labels it had at training time (one-hot / thermometer
    columns), whether a column marks passages it lacks, and its numeric features' names."""

    name: str
    kind: Literal["qrels", "grades"]
    levels: tuple[int, ...]
    missing: bool
    extra: tuple[str, ...]

    def columns(self, mode: Encoding) -> list[str]:
        names = []
        if mode in ("onehot", "both"):
            names += [f"{self.name}={v}" for v in self.levels]
        if mode in ("ordinal", "both"):
            names += [f"{self.name}>={v}" for v in self.levels[1:]]
        if self.missing:
            names.append(f"{self.name}=missing")
        return names + list(self.extra)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "levels": list(self.levels), "extra": list(self.extra)}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SourceEncoding:
        return cls(str(raw["name"]), raw["kind"], tuple(int(v) for v in raw["levels"]), bool(raw["missing"]),
                   tuple(str(x) for x in raw["extra"]))


@dataclass
class RelevanceFeatures:
    """Feature matrix of every (query, passage) any source labels, and each source's integer labels."""

    keys: list[PairKey]
    matrix: np.ndarray
    names: list[str]
    labels: dict[str, dict[PairKey, int]] = field(default_factory=dict)
    """source name -> (query, passage) -> integer label (qrels label or max grade) for the single-source view."""
    encodings: list[SourceEncoding] = field(default_factory=list)
    mode: Encoding = "onehot"


def _source_name(path: str | Path) -> str:
    p = Path(path)
    return p.name[: -len(".parquet")] if p.name.endswith(".parquet") else p.stem


def _mean_distribution(g: pd.DataFrame) -> tuple[dict[PairKey, list[float]], list[str]]:
    """Mean ``grade_probs`` distribution over a passage's items (empty when any row lacks one)."""
    if "grade_probs" not in g.columns or not len(g) or not g["grade_probs"].notna().all():
        return {}, []
    dists = [json.loads(x) for x in g["grade_probs"]]
    labels_set = sorted({lab for d in dists for lab in d})
    frame = pd.DataFrame([[float(d.get(lab, 0.0)) for lab in labels_set] for d in dists], columns=labels_set)
    frame["q"], frame["p"] = g["query_id"].astype(str).to_numpy(), g["passage_id"].astype(str).to_numpy()
    mean = frame.groupby(["q", "p"])[labels_set].mean()
    return {(str(q), str(p)): [float(x) for x in row.to_numpy()] for (q, p), row in mean.iterrows()}, labels_set


def _grades_sources(path: Path, count_threshold: int, problems: Problems) -> list[SourceData]:
    """Every grader of a grades parquet as a source: max grade, share of items counted, mean distribution."""
    from autograde.core.tables import read_table

    df = read_table(path)
    missing = [c for c in ["query_id", "passage_id", "item_id", "grader", "grade"] if c not in df.columns]
    if missing:
        problems.add(path, 1, f"missing column(s) {', '.join(missing)}", "give a grades table written by "
                     "'autograde grade'")
        return []
    out = []
    for grader, g in df.groupby("grader", sort=True):
        g = g[~g["grade"].isna()]
        best = passage_labels(g, "max", 0, warn=False)
        labels = {(str(q), str(p)): int(v) for (q, p), v in best.items()}
        extra: dict[PairKey, list[float]] = {}
        names: list[str] = []
        if not bool((g.groupby(["query_id", "passage_id"]).size() <= 1).all()):  # a bank: several items per passage
            per_query = g.groupby("query_id")["item_id"].nunique()
            counted = passage_labels(g, "count", count_threshold, warn=False)
            for k in labels:
                extra[k] = [float(counted.get(k, 0)) / float(per_query.get(k[0], 1))]
            names.append(f"{grader}:share>={count_threshold}")
        dist, option_labels = _mean_distribution(g)
        for k, values in dist.items():
            extra.setdefault(k, []).extend(values)
        names += [f"{grader}:p({lab})" for lab in option_labels]
        out.append(SourceData(str(grader), "grades", str(path), labels, extra, tuple(names)))
    return out


def read_sources(sources: Iterable[str], count_threshold: int = 4, problems: Problems | None = None,
                 at: tuple[str, int | None] = ("calibrated_qrels.sources", None)) -> list[SourceData]:
    """Every source of the given files (a qrels file is one source, a grades parquet one per grader); ``at``: where
    the list of sources is written (a config file and line), for problems of the list itself."""
    own = problems is None
    problems = problems if problems is not None else Problems()
    out: list[SourceData] = []
    for src in sources:
        p = Path(src)
        if p.suffix == ".parquet":
            if not p.exists():
                problems.add(p, None, "file not found", "check calibrated_qrels.sources")
                continue
            out += _grades_sources(p, count_threshold, problems)
        else:
            q, lines = read_qrels_with_lines(p, problems)
            out.append(SourceData(_source_name(p), "qrels", str(p),
                                  {(qid, d): v for qid, docs in q.items() for d, v in docs.items()}, lines=lines))
    if not out and not problems:
        problems.add(*at, "no sources given", "list qrels or grades files")
    names = [s.name for s in out]
    for n in sorted({n for n in names if names.count(n) > 1}):
        problems.add(*at, f"two sources are named {n!r}",
                     "give every source a distinct file name (the name labels its features)")
    if own:
        problems.raise_if_any()
    return out


def _columns(src: SourceData, enc: SourceEncoding, keys: list[PairKey], mode: Encoding) -> np.ndarray:
    """The encoded columns of one source for ``keys`` (a passage the source lacks: zeros + the missing flag)."""
    lab = np.array([src.labels.get(k, -(10**9)) for k in keys], dtype=np.int64)
    has = np.array([k in src.labels for k in keys])
    cols: list[np.ndarray] = []
    if mode in ("onehot", "both"):
        cols += [(lab == v) for v in enc.levels]
    if mode in ("ordinal", "both"):
        cols += [has & (lab >= v) for v in enc.levels[1:]]
    if enc.missing:
        cols.append(~has)
    if enc.extra:
        width = len(enc.extra)
        cols += list(np.array([src.extra.get(k, [0.0] * width) for k in keys], dtype=np.float64).T)
    return np.array(cols, dtype=np.float32).T.reshape(len(keys), -1)


def _training_encoding(src: SourceData, keys: list[PairKey]) -> SourceEncoding:
    return SourceEncoding(src.name, src.kind, tuple(sorted(set(src.labels.values()))),
                          any(k not in src.labels for k in keys), src.extra_names)


def check_against(sources: list[SourceData], encodings: list[SourceEncoding], keys: list[PairKey],
                   problems: Problems, given: list[str] | None = None,
                   at: tuple[str, int | None] = ("sources", None)) -> None:
    """A new collection's sources against a model's encodings: same names, labels the model saw, same features.
    ``given``: the names of every source given (also those the model does not use), for the message; ``at``: where
    the sources are named (a config line, or the command's option), for a source that is missing. A label the
    model never saw is named at its first line in the source file."""
    have = {s.name: s for s in sources}
    given = sorted(given if given is not None else have)
    for enc in encodings:
        src = have.get(enc.name)
        if src is None:
            problems.add(*at, f"the model needs source {enc.name!r}, which none of the given files has "
                         f"(given: {', '.join(given) or 'none'})",
                         f"add the {enc.name} output of the new collection (a qrels file named {enc.name}.qrel or a "
                         f"grades table with grader {enc.name})")
            continue
        unseen = sorted(set(src.labels.values()) - set(enc.levels))
        if unseen:
            problems.add(src.path, src.first_line(unseen[0]), f"source {enc.name!r} has label(s) "
                         f"{', '.join(map(str, unseen))} the model "
                         f"never saw (training labels: {', '.join(map(str, enc.levels))})",
                         "give the same grader's output on the same scale, or refit the model with these labels")
        if tuple(src.extra_names) != enc.extra:
            problems.add(src.path, None, f"source {enc.name!r} has features {', '.join(src.extra_names) or 'none'}, "
                         f"the model was fitted with {', '.join(enc.extra) or 'none'}",
                         "grade the new collection with the same grader settings (scoring, bank)")
        lacking = [k for k in keys if k not in src.labels]
        if lacking and not enc.missing:
            q, d = lacking[0]
            problems.add(src.path, None, f"source {enc.name!r} lacks {len(lacking)} of the {len(keys)} passages (the "
                         f"first: query {q!r}, passage {d!r}), and every training passage had it",
                         "give every passage a label from every source")


def encode(sources: list[SourceData], mode: Encoding, encodings: list[SourceEncoding] | None = None
           ) -> RelevanceFeatures:
    """The feature matrix of every (query, passage) of ``sources``.

    Without ``encodings`` (fitting) each source's encoding is taken from its data; with them (applying a model)
    the sources are matched by name, every encoding's source must be there (an extra source is ignored with a
    warning) and its labels must be ones the model saw.
    """
    given = [s.name for s in sources]
    if encodings is not None:
        wanted = {e.name for e in encodings}
        extra = sorted(s.name for s in sources if s.name not in wanted)
        if extra:
            logger.warning("ignoring source(s) %s: the model was not fitted with them", ", ".join(extra))
        sources = [s for s in sources if s.name in wanted]
    keys = sorted({k for s in sources for k in s.labels})
    problems = Problems()
    if encodings is None:
        encodings = [_training_encoding(s, keys) for s in sources]
    else:
        check_against(sources, encodings, keys, problems, given)
        if not keys and not problems:
            problems.add("sources", None, "the sources label no passage", "give the new collection's graders' outputs")
    problems.raise_if_any()
    by_name = {s.name: s for s in sources}
    blocks = [_columns(by_name[e.name], e, keys, mode) for e in encodings]
    names = [c for e in encodings for c in e.columns(mode)]
    matrix = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(keys), 0), np.float32)
    return RelevanceFeatures(keys, matrix, names, {e.name: by_name[e.name].labels for e in encodings},
                             list(encodings), mode)


def features_from_sources(sources: Iterable[str], cfg: Any, encodings: list[SourceEncoding] | None = None
                          ) -> RelevanceFeatures:
    """Read the source files of ``cfg`` (``features``, ``count_threshold``) and encode them."""
    return encode(read_sources(sources, cfg.count_threshold), cfg.features, encodings)
