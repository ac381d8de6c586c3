"""Arrays the network trains and predicts on: one row per (text, judge) annotation.

>>> from autograde.rubric.definition import Rubric
>>> r = Rubric.model_validate({"main": "Q0", "questions": [{"id": "Q0", "options": [1, 2]}]})
>>> llm = LlmAnswers(probs={"t1": {"Q0": np.array([0.2, 0.8])}}, groups={"t1": "t1"})
>>> human = HumanAnswers([Annotation("t1", "ann", (1,), "h.tsv", 2)])
>>> d = build_dataset(r, llm, human)
>>> d.features.tolist(), d.answers.tolist(), d.judges.tolist()
([[0.20000000298023224, 0.800000011920929]], [[1]], ['ann'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from autograde.core.log import logger
from autograde.rubric.definition import Rubric
from autograde.rubric.tables import MISSING, Annotation, HumanAnswers, LlmAnswers

__all__ = ["CalibrationData", "build_dataset", "expected_values", "feature_names", "group_folds", "prediction_rows",
           "text_features"]


@dataclass(frozen=True)
class CalibrationData:
    """Rows = (text, judge). ``answers[r, q]`` is an option index of question q, or MISSING (-1)."""

    text_ids: np.ndarray
    judges: np.ndarray
    groups: np.ndarray
    features: np.ndarray
    answers: np.ndarray
    questions: tuple[str, ...]
    option_values: tuple[tuple[float, ...], ...]
    main: str
    feature_names: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    sessions: np.ndarray | None = None
    """Distinguishes repeated annotations of one text by one judge (None: all distinct)."""
    """Sentences every output built from this data repeats (renormalized distributions, dropped rows)."""

    def __len__(self) -> int:
        return int(self.answers.shape[0])

    @property
    def main_index(self) -> int:
        return self.questions.index(self.main)

    @property
    def option_counts(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.option_values)

    def subset(self, rows: np.ndarray) -> CalibrationData:
        """The rows ``rows`` (indices or a boolean mask), everything else shared."""
        return CalibrationData(self.text_ids[rows], self.judges[rows], self.groups[rows], self.features[rows],
                               self.answers[rows], self.questions, self.option_values, self.main,
                               self.feature_names, self.notes,
                               None if self.sessions is None else self.sessions[rows])

    def row_keys(self) -> list[str]:
        """A unique key per row: ``text|judge`` (``|session`` where a judge annotated a text twice)."""
        sessions = self.sessions if self.sessions is not None else np.full(len(self), "", dtype=object)
        base = [f"{t}|{j}" for t, j in zip(self.text_ids, self.judges, strict=True)]
        counts: dict[str, int] = {}
        for b in base:
            counts[b] = counts.get(b, 0) + 1
        return [f"{b}|{s}" if counts[b] > 1 else b for b, s in zip(base, sessions, strict=True)]

    def values_of(self, q: int) -> np.ndarray:
        """Answer values of question q per row (NaN where missing)."""
        vals = np.asarray(self.option_values[q], dtype=np.float64)
        a = self.answers[:, q]
        out = np.full(a.shape, np.nan)
        ok = a != MISSING
        out[ok] = vals[a[ok]]
        return out


def expected_values(probs: np.ndarray, option_values: tuple[tuple[float, ...], ...]) -> np.ndarray:
    """Expected answer per row and question (paper equation 2): rows x questions."""
    out = np.zeros(probs.shape[:2])
    for q, vals in enumerate(option_values):
        out[:, q] = probs[:, q, :len(vals)] @ np.asarray(vals, dtype=np.float64)
    return out


def feature_names(rubric: Rubric) -> tuple[str, ...]:
    """``Q1=1, Q1=2, ...``: one feature per (input question, option)."""
    return tuple(f"{qid}={v:g}" for qid in rubric.input_ids for v in rubric.question(qid).values)


def text_features(rubric: Rubric, llm: LlmAnswers, text_id: str) -> np.ndarray:
    """The LLM's distributions of one text, concatenated in the rubric's input order."""
    return np.concatenate([llm.probs[text_id][qid] for qid in rubric.input_ids]).astype(np.float32)


def _notes(llm: LlmAnswers, extra: list[str]) -> tuple[str, ...]:
    note = llm.renormalized_note()
    return tuple(([note] if note else []) + extra)


def build_dataset(rubric: Rubric, llm: LlmAnswers, human: HumanAnswers, notes: tuple[str, ...] = ()
                  ) -> CalibrationData:
    """Join human answers with the LLM's features of their text.

    Annotations of texts the LLM table lacks cannot be used and are dropped (counted in ``notes`` and the
    log); so are annotations without any answer. ``notes`` are carried along (e.g. a text-list filter).
    """
    keep: list[Annotation] = []
    no_llm = no_answer = 0
    for a in human.annotations:
        if a.text_id not in llm.probs:
            no_llm += 1
        elif all(x == MISSING for x in a.answers):
            no_answer += 1
        else:
            keep.append(a)
    extra = list(notes)
    if no_llm:
        extra.append(f"dropped {no_llm} annotation(s) of texts without LLM distributions")
    if no_answer:
        extra.append(f"dropped {no_answer} annotation(s) without any answer")
    if human.screened_out:
        extra.append(f"screened out {human.screened_out} annotation(s) (screening column != 1)")
    for note in extra[len(notes):]:  # logged once: the caller logs ``notes``, the human-table reader its own
        logger.info("%s", note)
    extra += [n for n in human.notes if n not in extra]
    n = len(keep)
    feats = np.stack([text_features(rubric, llm, a.text_id) for a in keep]) if n else np.zeros(
        (0, len(feature_names(rubric))), np.float32)
    return CalibrationData(
        text_ids=np.array([a.text_id for a in keep], dtype=object),
        judges=np.array([a.judge for a in keep], dtype=object),
        groups=np.array([llm.groups.get(a.text_id, a.text_id) for a in keep], dtype=object),
        features=feats,
        answers=np.array([a.answers for a in keep], dtype=np.int64).reshape(n, len(rubric.ids)),
        questions=rubric.ids,
        option_values=tuple(q.values for q in rubric.questions),
        main=rubric.main,
        feature_names=feature_names(rubric),
        notes=_notes(llm, extra),
        sessions=np.array([a.session for a in keep], dtype=object),
    )


def prediction_rows(rubric: Rubric, llm: LlmAnswers, judges: list[str]) -> CalibrationData:
    """Rows for every (text of ``llm``, judge in ``judges``), without answers: what ``predict`` fills in."""
    texts = sorted(llm.probs)
    pairs = [(t, j) for t in texts for j in judges]
    n = len(pairs)
    feats = np.stack([text_features(rubric, llm, t) for t, _ in pairs]) if n else np.zeros(
        (0, len(feature_names(rubric))), np.float32)
    return CalibrationData(
        text_ids=np.array([t for t, _ in pairs], dtype=object),
        judges=np.array([j for _, j in pairs], dtype=object),
        groups=np.array([llm.groups.get(t, t) for t, _ in pairs], dtype=object),
        features=feats,
        answers=np.full((n, len(rubric.ids)), MISSING, dtype=np.int64),
        questions=rubric.ids,
        option_values=tuple(q.values for q in rubric.questions),
        main=rubric.main,
        feature_names=feature_names(rubric),
        notes=_notes(llm, []),
    )


def group_folds(groups: np.ndarray, k: int, seed: int | list[int]) -> np.ndarray:
    """Fold (0..k-1) of every row: the distinct groups, sorted then shuffled by ``seed``, dealt round-robin.

    Sorting first makes the assignment independent of row order; a group never spans two folds.
    """
    uniq = np.array(sorted(set(groups.tolist())), dtype=object)
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of = {g: i % k for i, g in enumerate(uniq[order])}
    return np.array([fold_of[g] for g in groups], dtype=np.int64)
