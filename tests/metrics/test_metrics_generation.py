"""Generation metrics: table-driven cases with values derived by hand from the reference server's semantics.

Derivations (reference normalization: True/False -> yes/no, '_' -> ' ', lower, punctuation -> ' ',
articles removed, whitespace collapsed; ROUGE = rouge-score F-measure with Porter stemming, which keeps
only [a-z0-9] tokens; every metric is the max (any) over gold answers, StringEM the fraction):

- "Paris" vs "The capital is Paris." -> gold "paris", pred "capital is paris": not equal (EM 0), substring
  (Acc 1), token covered (CoverEM 1); F1: 1 common of 3 pred / 1 gold tokens -> P 1/3, R 1 -> 0.5; ROUGE-1
  and ROUGE-L the same 0.5; ROUGE-2: the gold has no bigram -> 0.
- "U.S." vs "u s" -> both "u s": everything 1, ROUGE-2 too (one shared bigram).
- "True" vs "yes" -> gold "yes": everything 1 except ROUGE-2 (single token -> 0).
- ["Barack Obama", "Obama"] vs "Obama" -> equals one of two golds: EM 1, StringEM 1/2; F1 = max(2/3, 1) = 1.
- "the" vs "anything" -> gold normalizes to "": "" is a substring of every prediction (Acc 1) and has no
  tokens, so all([]) makes CoverEM 1; EM/StringEM 0; F1 0 (empty gold); ROUGE 0.
- "Rock and roll" vs "roll rock and" -> same bag of words: F1 1, ROUGE-1 1, CoverEM 1; not a substring
  (Acc 0); bigrams {rock and, and roll} vs {roll rock, rock and}: ROUGE-2 1/2; LCS "rock and": ROUGE-L 2/3.
- "北京" vs "北京" -> normalization keeps it: EM/Acc/StringEM/CoverEM/F1 1; the reference ROUGE tokenizer
  drops non-ASCII, so ROUGE 0 (the unicode tokenizer fixes it: each character a token -> all 1).
- "Paris" vs "" -> Acc is 0 by rule for an empty prediction, nothing matches: all 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.helpers import shared_data

from autograde.core.errors import InputError
from autograde.metrics.config import GenerationMetricsConfig
from autograde.metrics.generation import (
    UnicodeRougeTokenizer,
    evaluate_generation,
    generation_markdown,
    normalize_answer,
    read_generation_data,
    score_item,
)

M = ("em", "acc", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l")

CASES = [
    # golds, prediction, (em, acc, stringem, coverem, f1, rouge-1, rouge-2, rouge-l)
    (["Paris"], "The capital is Paris.", (0, 1, 0, 1, 0.5, 0.5, 0, 0.5)),
    (["U.S."], "u s", (1, 1, 1, 1, 1, 1, 1, 1)),
    (["True"], "yes", (1, 1, 1, 1, 1, 1, 0, 1)),
    (["Barack Obama", "Obama"], "Obama", (1, 1, 0.5, 1, 1, 1, 0, 1)),
    (["the"], "anything", (0, 1, 0, 1, 0, 0, 0, 0)),
    (["Rock and roll"], "roll rock and", (0, 0, 0, 1, 1, 1, 0.5, 2 / 3)),
    (["北京"], "北京", (1, 1, 1, 1, 1, 0, 0, 0)),
    (["Paris"], "", (0, 0, 0, 0, 0, 0, 0, 0)),
]


@pytest.mark.parametrize(("golds", "pred", "expected"), CASES, ids=[f"{c[0]}~{c[1]!r}" for c in CASES])
def test_reference_semantics(golds: list[str], pred: str, expected: tuple[float, ...]) -> None:
    got = score_item(golds, pred)
    assert {m: got[m] for m in M} == {m: pytest.approx(v, abs=1e-12) for m, v in zip(M, expected, strict=True)}


# The fixes: unicode ROUGE keeps non-ASCII; dropping empty golds stops "the" matching everything.
FIXED = [
    (["北京"], "北京", "unicode", "keep", {"rouge-1": 1.0, "rouge-2": 1.0, "rouge-l": 1.0}),
    (["the"], "anything", "reference", "drop", {"acc": 0.0, "coverem": 0.0, "em": 0.0}),
    (["the", "Paris"], "Paris", "reference", "drop", {"em": 1.0, "stringem": 1.0}),  # 1 of 1 remaining gold
    (["the", "Paris"], "Paris", "reference", "keep", {"em": 1.0, "stringem": 0.5}),
]


@pytest.mark.parametrize(("golds", "pred", "tok", "empty", "expected"), FIXED)
def test_documented_fixes(golds: list[str], pred: str, tok: str, empty: str, expected: dict[str, float]) -> None:
    got = score_item(golds, pred, rouge_tokenizer=tok, empty_reference=empty)
    assert {m: got[m] for m in expected} == expected


@pytest.mark.parametrize(("text", "normalized"), [
    ("The U.S._Army!", "u s army"),
    ("True", "yes"), ("False", "no"), ("true", "true"), (" True", "true"),  # only the exact strings map
    ("An apple a day", "apple day"),
    ("“quoted”", "“quoted”"),  # curly double quotes are not in the punctuation set
    ("it’s `tick`", "it s tick"),
    ("Theatre and Anatomy", "theatre and anatomy"),  # articles only as whole words
])
def test_normalize_text(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


def test_unicode_tokenizer_matches_reference_on_ascii() -> None:
    from rouge_score.tokenizers import DefaultTokenizer

    ref, ours = DefaultTokenizer(use_stemmer=True), UnicodeRougeTokenizer()
    for text in ["running dogs ran 3x faster", "u s army_base", "Hello, WORLD: 42 cats' toys"]:
        assert ours.tokenize(text) == ref.tokenize(text)
    assert ours.tokenize("Café Müller") == ["café", "müller"]
    assert ref.tokenize("Café Müller") == ["caf", "m", "ller"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_evaluate_generation_shape_and_diagnostics(tmp_path: Path) -> None:
    rows = [{"id": i, "golden_answers": g, "pred_answer": p} for i, (g, p, _) in enumerate(CASES)]
    data = read_generation_data(write_jsonl(tmp_path / "d.jsonl", rows))
    body = evaluate_generation(data.golds, data.preds, where=data.where)
    res = body["results"]
    assert list(res)[:8] == ["acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l"]
    assert res["em"] == [float(c[2][0]) for c in CASES]
    assert res["avg_stringem"] == pytest.approx(sum(c[2][2] for c in CASES) / len(CASES))
    d = body["diagnostics"]
    assert d == {"items": 8, "empty_predictions": 1, "gold_answers_normalizing_to_empty": 1,
                 "items_without_gold_answers": 0, "rouge_non_ascii_items": 1}
    assert body["diagnostic_items"]["gold_answers_normalizing_to_empty"] == [f"{tmp_path / 'd.jsonl'}:5"]
    assert "| StringEM | 0.4375 |" in generation_markdown(body)  # (0+1+1+0.5+0+0+1+0) / 8
    with pytest.raises(ValueError, match=r"d\.jsonl:5"):
        evaluate_generation(data.golds, data.preds, GenerationMetricsConfig(empty_reference="error"), data.where)
    dropped = evaluate_generation(data.golds, data.preds, GenerationMetricsConfig(empty_reference="drop"))
    assert dropped["results"]["acc"][4] == 0.0 and dropped["diagnostics"]["items_without_gold_answers"] == 1


def test_reader_keys_and_separate_prediction_file(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "gold.jsonl", [{"id": 1, "answers": ["a b"]}, {"id": 2, "answers": "c"}])
    preds = write_jsonl(tmp_path / "pred.jsonl", [{"id": 1, "out": "a b"}, {"id": 2, "out": "d"}])
    got = read_generation_data(data, gold_key="answers", pred_key="out", predictions=preds)
    assert got.golds == [["a b"], ["c"]] and got.preds == ["a b", "d"]  # a single string is one gold answer


@pytest.mark.parametrize(("gold_rows", "pred_rows", "message"), [
    ([], None, r"gold\.jsonl: file holds no records"),
    ([{"golden_answers": ["x"], "pred_answer": "x"}, {"golden_answers": ["y"]}], None,
     r"gold\.jsonl:2: no prediction: key 'pred_answer' missing"),
    ([{"golden_answers": "x", "pred_answer": None}], None, r"gold\.jsonl:1: prediction 'pred_answer' must be a string"),
    ([{"golden_answers": [["x"]], "pred_answer": "x"}], None, r"gold\.jsonl:1: 'golden_answers' must be a list"),
    ([{"golden_answers": ["x"]}, {"golden_answers": ["y"]}], [{"pred_answer": "x"}],
     r"gold\.jsonl:2: 2 gold records in .*gold\.jsonl but 1 predictions in .*pred\.jsonl"),
    ([{"golden_answers": ["x"]}], [], r"pred\.jsonl: file holds no records"),
    ([{"id": 1, "golden_answers": ["x"]}], [{"id": 2, "pred_answer": "x"}], r"pred\.jsonl:1: id 2 does not match"),
])
def test_reader_errors_name_file_and_line(tmp_path: Path, gold_rows: list[dict], pred_rows: list[dict] | None,
                                          message: str) -> None:
    data = write_jsonl(tmp_path / "gold.jsonl", gold_rows)
    preds = write_jsonl(tmp_path / "pred.jsonl", pred_rows) if pred_rows is not None else None
    with pytest.raises(InputError, match=message):
        read_generation_data(data, predictions=preds)


def test_bad_json_line_is_reported(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text('{"golden_answers": ["x"], "pred_answer": "x"}\n{broken\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_generation_data(p)
    text = str(err.value)
    assert "d.jsonl:2: not valid JSON" in text and "d.jsonl:4: expected a JSON object, got list" in text


def test_reference_sample_nq_golds_parse() -> None:
    sample = shared_data("ultrarag", "sample_nq_10.jsonl")
    if not sample.is_file():
        pytest.skip(f"{sample} not present (../shared/data beside the checkout)")
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]
    golds = [r["golden_answers"] for r in rows]
    body = evaluate_generation(golds, [g[0] for g in golds])  # predicting the first gold answer
    assert body["results"]["avg_em"] == 1.0 and body["results"]["avg_f1"] == 1.0
    assert body["results"]["avg_acc"] == 1.0 and body["diagnostics"]["items"] == 10
