"""Generation metrics of the reference evaluation server: EM, Acc, StringEM, CoverEM, F1, ROUGE-1/2/L.

>>> scores = score_item(["Paris"], "The capital is Paris.")
>>> scores["em"], scores["acc"], scores["coverem"], scores["f1"]
(0.0, 1.0, 1.0, 0.5)

Every metric compares one prediction with a list of gold answers after :func:`normalize_answer`, which is
the reference's exactly: an exact "True"/"False" becomes yes/no, ``_`` becomes a space, lower-case,
punctuation (ASCII plus ‘ ’ ´ `) becomes a space, the articles a/an/the are removed, whitespace collapses.

- ``em``: the prediction equals some gold answer. ``stringem``: the fraction of gold answers it equals.
- ``acc``: some gold answer is a substring of the prediction (0 for an empty prediction).
- ``coverem``: every token of some gold answer occurs among the prediction's tokens.
- ``f1``: SQuAD token F1, max over gold answers. ``rouge-1/2/l``: rouge-score F-measure with the Porter
  stemmer, max over gold answers.

Known weaknesses of the reference, kept by default for parity and reported, with options to fix them:

- rouge-score's tokenizer keeps only ``[a-z0-9]``: non-ASCII answers (CJK, Cyrillic) get ROUGE 0, and
  accented words are cut apart. ``rouge_tokenizer="unicode"`` keeps every letter and digit (CJK characters
  as single tokens) and gives the same tokens as the reference on ASCII text.
- A gold answer that normalizes to nothing (e.g. "the", "?") is a substring of every prediction and has
  no tokens, so Acc and CoverEM are 1 whatever the prediction. Such answers are counted and warned about;
  ``empty_reference="drop"`` ignores them and ``"error"`` refuses the input.
- An item without gold answers scores 0 everywhere; it is counted and warned about.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from autograde.core.errors import InvalidValueError, Problems
from autograde.core.log import logger
from autograde.core.text import iter_json_objects
from autograde.metrics.config import GENERATION_METRICS, GenerationMetricsConfig
from autograde.metrics.report import markdown_table

__all__ = [
    "GenerationData",
    "UnicodeRougeTokenizer",
    "evaluate_generation",
    "generation_markdown",
    "normalize_answer",
    "read_generation_data",
    "score_item",
]

_PUNCT = set(string.punctuation + "‘’´`")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """The reference server's answer normalization (SQuAD-like, punctuation to spaces).

    >>> normalize_answer("The U.S._Army!"), normalize_answer("True"), normalize_answer("true")
    ('u s army', 'yes', 'true')
    """
    text = {"True": "yes", "False": "no"}.get(text, text)
    text = text.replace("_", " ").lower()
    text = "".join(" " if ch in _PUNCT else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split()).strip()


# CJK ideographs and kana are single tokens; other letters and digits form words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNICODE_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")


class UnicodeRougeTokenizer:
    """rouge-score tokenizer that keeps non-ASCII letters; identical to the default one on ASCII text.

    >>> UnicodeRougeTokenizer().tokenize("北京 Zürich running")
    ['北', '京', 'zürich', 'run']
    """

    def __init__(self) -> None:
        from nltk.stem import porter

        self._stemmer = porter.PorterStemmer()

    def tokenize(self, text: str) -> list[str]:
        tokens = _UNICODE_TOKEN.findall(text.lower())
        # As rouge-score: stem only words longer than 3 characters.
        return [self._stemmer.stem(t) if len(t) > 3 else t for t in tokens]


_SCORERS: dict[str, Any] = {}


def _rouge_scorer(tokenizer: str) -> Any:
    """One cached RougeScorer per tokenizer kind (building one loads the stemmer)."""
    if tokenizer not in _SCORERS:
        from rouge_score import rouge_scorer, tokenizers

        # Always pass a tokenizer: without one RougeScorer logs through absl, which installs a root handler.
        chosen = UnicodeRougeTokenizer() if tokenizer == "unicode" else tokenizers.DefaultTokenizer(use_stemmer=True)
        _SCORERS[tokenizer] = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True,
                                                       tokenizer=chosen)
    return _SCORERS[tokenizer]


def _f1(gold: str, pred: str) -> float:
    pred_tokens, gold_tokens = pred.split(), gold.split()
    if not pred_tokens or not gold_tokens:
        return 0.0
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def score_item(golds: Sequence[str], pred: str, metrics: Sequence[str] = GENERATION_METRICS,
               rouge_tokenizer: Literal["reference", "unicode"] = "reference",
               empty_reference: Literal["keep", "drop"] = "keep") -> dict[str, float]:
    """All requested metrics of one prediction against its gold answers (reference semantics by default)."""
    pred_n = normalize_answer(pred)
    golds_n = [normalize_answer(g) for g in golds]
    if empty_reference == "drop":
        golds_n = [g for g in golds_n if g]
    pred_tokens = pred_n.split()
    out: dict[str, float] = {}
    rouge = None
    for m in metrics:
        if m == "acc":
            out[m] = 1.0 if pred_n and any(g in pred_n for g in golds_n) else 0.0
        elif m == "em":
            out[m] = 1.0 if any(pred_n == g for g in golds_n) else 0.0
        elif m == "stringem":
            out[m] = sum(1 for g in golds_n if pred_n == g) / len(golds_n) if golds_n else 0.0
        elif m == "coverem":
            out[m] = 1.0 if any(all(t in pred_tokens for t in g.split()) for g in golds_n) else 0.0
        elif m == "f1":
            out[m] = max((_f1(g, pred_n) for g in golds_n), default=0.0)
        elif m in ("rouge-1", "rouge-2", "rouge-l"):
            if rouge is None:
                scorer = _rouge_scorer(rouge_tokenizer)
                rouge = [scorer.score(g, pred_n) for g in golds_n]
            key = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-l": "rougeL"}[m]
            out[m] = float(max((r[key].fmeasure for r in rouge), default=0.0))
        else:
            raise InvalidValueError(f"unknown generation metric {m!r}; valid: {', '.join(GENERATION_METRICS)}")
    return out


@dataclass
class GenerationData:
    """Gold answer lists and predictions, aligned, with where each item came from (file:line)."""

    golds: list[list[str]] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)


def _read_jsonl(path: str | Path, problems: Problems) -> list[tuple[int, dict[str, Any]]]:
    """JSON objects of a JSONL file with their line numbers; bad lines become problems; blank lines skipped."""
    return list(iter_json_objects(path, problems))


def _gold_list(value: Any, path: str | Path, n: int, key: str, problems: Problems) -> list[str] | None:
    """Gold answers as a list of strings; a single string is one answer; numbers become strings."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return [v if isinstance(v, str) else str(v) for v in value]
    problems.add(path, n, f"{key!r} must be a list of strings, got {json.dumps(value, ensure_ascii=False)[:80]}",
                 "give the gold answers as a JSON list of strings")
    return None


def read_generation_data(data: str | Path, gold_key: str = "golden_answers", pred_key: str = "pred_answer",
                         predictions: str | Path | None = None) -> GenerationData:
    """Read gold answers (and predictions) from JSONL; every problem is reported with file and line.

    Without ``predictions`` each line of ``data`` holds both keys. With it, ``predictions`` is a JSONL file
    whose lines hold ``pred_key`` and align with ``data`` line by line (records with an ``id`` in both files
    must agree); different counts are an error. An empty file is an error.
    """
    problems = Problems()
    gold_records = _read_jsonl(data, problems)
    pred_records = _read_jsonl(predictions, problems) if predictions is not None else gold_records
    pred_path = predictions if predictions is not None else data
    for path, records in ((data, gold_records), (pred_path, pred_records)):
        if not records and not any(p.path == str(path) for p in problems.items):
            problems.add(path, None, "file holds no records", "give a JSONL file with one object per line")
    if predictions is not None and gold_records and pred_records and len(gold_records) != len(pred_records):
        short, long_ = ((pred_path, data) if len(pred_records) < len(gold_records) else (data, pred_path))
        n_short, n_long = sorted((len(gold_records), len(pred_records)))
        first_unmatched = (gold_records if len(gold_records) > len(pred_records) else pred_records)[n_short][0]
        problems.add(long_, first_unmatched,
                     f"{len(gold_records)} gold records in {data} but {len(pred_records)} predictions in "
                     f"{pred_path}; this record ({n_short + 1} of {n_long}) has no partner in {short}",
                     "give one prediction per gold record, in the same order")
    out = GenerationData(sources={"data": str(data), "predictions": str(pred_path)})
    for (gn, grec), (pn, prec) in zip(gold_records, pred_records, strict=False):
        golds = None
        if gold_key not in grec:
            problems.add(data, gn, f"no gold answers: key {gold_key!r} missing (keys: {', '.join(grec)})",
                         "set generation.gold_key / --gold-key to the key holding the gold answers")
        else:
            golds = _gold_list(grec[gold_key], data, gn, gold_key, problems)
        pred = prec.get(pred_key)
        if pred_key not in prec:
            problems.add(pred_path, pn, f"no prediction: key {pred_key!r} missing (keys: {', '.join(prec)})",
                         "set generation.pred_key / --pred-key to the key holding the predicted answer")
        elif not isinstance(pred, str):
            problems.add(pred_path, pn, f"prediction {pred_key!r} must be a string, got {type(pred).__name__}",
                         "write the predicted answer as a JSON string")
            pred = None
        if predictions is not None and "id" in grec and "id" in prec and grec["id"] != prec["id"]:
            problems.add(pred_path, pn, f"id {prec['id']!r} does not match id {grec['id']!r} at {data}:{gn}",
                         "order the predictions like the gold records")
        if golds is not None and isinstance(pred, str):
            out.golds.append(golds)
            out.preds.append(pred)
            out.where.append(f"{data}:{gn}")
    problems.raise_if_any()
    return out


def _diagnostics(golds: Sequence[Sequence[str]], preds: Sequence[str], locs: list[str], empty_gold_items: list[int],
                 cfg: GenerationMetricsConfig, empty_reference: Literal["keep", "drop"]) -> dict[str, Any]:
    """What the reference would hide (items by location), each kind logged as a warning when found."""

    def _count(pred: Callable[[int], bool]) -> list[str]:
        return [locs[i] for i in range(len(preds)) if pred(i)]

    no_gold = _count(lambda i: not [x for x in golds[i] if normalize_answer(x) or empty_reference == "keep"])
    diagnostics: dict[str, Any] = {
        "items": len(preds),
        "empty_predictions": _count(lambda i: not normalize_answer(preds[i])),
        "gold_answers_normalizing_to_empty": [locs[i] for i in empty_gold_items],
        "items_without_gold_answers": no_gold,
    }
    if cfg.rouge_tokenizer == "reference" and any(m.startswith("rouge") for m in cfg.metrics):
        diagnostics["rouge_non_ascii_items"] = _count(
            lambda i: any(ord(c) > 127 for c in preds[i] + "".join(golds[i])))
    for key, label in (("gold_answers_normalizing_to_empty", "have a gold answer that normalizes to nothing "
                        f"({'ignored' if empty_reference == 'drop' else 'it matches every prediction in acc and coverem'})"),
                       ("items_without_gold_answers", "have no gold answer (scored 0)"),
                       ("empty_predictions", "have an empty prediction (scored 0 unless a gold answer is empty)"),
                       ("rouge_non_ascii_items", "contain non-ASCII text that the reference ROUGE tokenizer drops "
                        "(set rouge_tokenizer: unicode to keep it)")):
        found = diagnostics.get(key)
        if found:
            logger.warning("%d of %d items %s; first: %s", len(found), len(preds), label, found[0])
    return diagnostics


def evaluate_generation(golds: Sequence[Sequence[str]], preds: Sequence[str],
                        cfg: GenerationMetricsConfig | None = None,
                        where: Sequence[str] | None = None) -> dict[str, Any]:
    """The body of a generation result document.

    ``results`` is the reference's shape: per-sample lists under each metric, then ``avg_<metric>``.
    ``diagnostics`` counts what the reference would hide: empty predictions, gold answers that normalize to
    nothing, items without gold answers, and (reference tokenizer) items whose text ROUGE cannot see.
    """
    cfg = cfg or GenerationMetricsConfig()
    if len(golds) != len(preds):
        raise InvalidValueError(f"{len(golds)} gold answer lists but {len(preds)} predictions; give one of each per item")
    if not preds:
        raise InvalidValueError("no items to evaluate")
    locs = list(where) if where is not None else [f"item {i}" for i in range(len(preds))]
    empty_gold_items = [i for i, g in enumerate(golds) if any(not normalize_answer(x) for x in g)]
    if empty_gold_items and cfg.empty_reference == "error":
        shown = ", ".join(locs[i] for i in empty_gold_items[:10])
        raise InvalidValueError(f"{len(empty_gold_items)} item(s) have a gold answer that normalizes to nothing "
                         f"({shown}); fix the gold answers or set empty_reference to keep or drop")
    empty_reference: Literal["keep", "drop"] = "drop" if cfg.empty_reference == "drop" else "keep"
    metrics = list(cfg.metrics)
    results: dict[str, Any] = {m: [] for m in metrics}
    for g, p in zip(golds, preds, strict=True):
        scores = score_item(g, p, metrics, cfg.rouge_tokenizer, empty_reference)
        for m in metrics:
            results[m].append(scores[m])
    for m in metrics:
        results[f"avg_{m}"] = sum(results[m]) / len(results[m])

    diagnostics = _diagnostics(golds, preds, locs, empty_gold_items, cfg, empty_reference)
    return {
        "options": {
            "metrics": metrics,
            "rouge_tokenizer": cfg.rouge_tokenizer,
            "empty_reference": cfg.empty_reference,
            "gold_key": cfg.gold_key,
            "pred_key": cfg.pred_key,
        },
        "diagnostics": {k: (len(v) if isinstance(v, list) else v) for k, v in diagnostics.items()},
        "diagnostic_items": {k: v for k, v in diagnostics.items() if isinstance(v, list) and v},
        "results": results,
    }


_DISPLAY = {"acc": "Acc", "em": "EM", "stringem": "StringEM", "coverem": "CoverEM", "f1": "F1",
            "rouge-1": "Rouge_1", "rouge-2": "Rouge_2", "rouge-l": "Rouge_L"}


def generation_markdown(body: Mapping[str, Any]) -> str:
    """Metric | mean table of a generation result body."""
    metrics = body["options"]["metrics"]
    rows = [[_DISPLAY.get(m, m), body["results"][f"avg_{m}"]] for m in metrics]
    return markdown_table(["metric", "mean"], rows) + f"\n\n{body['diagnostics']['items']} items\n"
