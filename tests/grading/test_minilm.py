"""The embedded grader's encoder in plain torch (autograde.grading.minilm) equals transformers' BertModel bit for bit.

The reference is transformers' own ``AutoModel`` and ``AutoTokenizer`` on the same folder (the way the embedded grader
loaded the model before): equal token ids (truncation at the token budget included), equal last hidden states and
equal unit vectors, on the tests' texts and on passages of the bundled example.
"""

from __future__ import annotations

import json

import pytest
from support.helpers import REPO, TEST_DATA

from autograde.config.model import GraderConfig
from autograde.core.errors import GraderSetupError
from autograde.grading.embedded import EmbeddedGrader, Options
from autograde.grading.minilm import MiniLMEncoder, MiniLMTokenizer


def _texts() -> list[str]:
    rows = [json.loads(line) for line in (TEST_DATA / "grid.jsonl").read_text(encoding="utf-8").splitlines()]
    example = [json.loads(line)["text"] for line in
               (REPO / "config/example/corpus.jsonl").read_text(encoding="utf-8").splitlines()[:6]]
    return sorted({r["question_text"] for r in rows[:6]} | {r["passage_text"] for r in rows[:6]} | set(example)) + [
        "", "a", "Ünïcödé — accents, dashes and 'quotes'!", "rivers carry water " * 150]  # the last one is truncated


@pytest.mark.model
def test_the_torch_encoder_equals_transformers_bert_bit_for_bit() -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    folder = EmbeddedGrader._model_dir()
    ours = MiniLMEncoder(folder, 256)
    tok = AutoTokenizer.from_pretrained(folder)
    ref = AutoModel.from_pretrained(folder).eval()
    for text in _texts():
        enc = tok([text], truncation=True, max_length=256, return_tensors="pt")
        ids = ours.token_ids(text)
        assert ids == enc["input_ids"][0].tolist(), text[:60]
        with torch.inference_mode():
            expected = ref(**enc).last_hidden_state
        assert torch.equal(ours.last_hidden_state(ids), expected), text[:60]
        vector, n = ours.embed(text)
        assert n == len(ids)
        assert torch.equal(vector, torch.nn.functional.normalize(expected.mean(1), p=2, dim=1)[0])
    assert len(ours.token_ids("rivers carry water " * 150)) == 256


def test_the_tokenizer_alone_counts_what_the_grader_reads() -> None:
    folder = EmbeddedGrader._model_dir()
    grader = EmbeddedGrader(GraderConfig(name="sim", backend="embedded"), Options(max_seq_length=32))
    tok = MiniLMTokenizer(folder, 32)
    assert tok.token_ids("What is a river?")[0] == 101 and tok.token_ids("What is a river?")[-1] == 102  # [CLS] [SEP]
    assert grader._n_tokens("rivers " * 100) == len(tok.token_ids("rivers " * 100)) == 32
    assert grader._model is None  # counting tokens loads no weights


def test_a_folder_that_is_not_bert_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_act": "silu"}))
    with pytest.raises(GraderSetupError, match="not a BERT encoder"):
        MiniLMEncoder(tmp_path, 256)
