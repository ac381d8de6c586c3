"""The ``hf`` backend's seq2seq path (FLAN-T5 style) on a tiny T5 built here from a config (no download).

The tokenizer is a real ``tokenizers`` WordLevel tokenizer with sentencepiece-style ``▁`` word prefixes and a
``</s>`` appended, like T5's; its vocabulary comes from the DL20 grid and the prompt templates.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from support.helpers import TEST_DATA

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.hf import HFBackend
from autograde.grading.llm_grader import LLMGrader
from autograde.grading.prompts import list_prompts
from autograde.grading.registry import make_grader

torch.set_num_threads(1)

GRID = TEST_DATA / "grid.jsonl"  # self-made (tests/data/README.md)
QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
BOOSTED = "▁3"  # the tiny model is built to prefer this token first, so its answers are a label


def _requests() -> list[GradeRequest]:
    rows = [json.loads(line) for line in GRID.read_text(encoding="utf-8").splitlines()]
    return [GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                         "question", r["question_text"]) for r in rows[::4]]


REQS = _requests()


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    pre = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()])
    texts = [p.template for p in list_prompts()] + [f"{r.passage_text} {r.item_text} {r.query_text}" for r in REQS]
    texts += ["0 1 2 3 4 5 6 7 8 9 yes no Yes No"]
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for text in texts:
        for piece, _ in pre.pre_tokenize_str(text):
            vocab.setdefault(piece, len(vocab))
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre
    tk.decoder = decoders.Metaspace()
    tk.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(vocab), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                      num_heads=4, relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0, tie_word_embeddings=False)
    model = T5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # point BOOSTED's output row along the first decoder state, so it is the argmax
        enc = tok([REQS[0].passage_text, REQS[1].item_text], return_tensors="pt", padding=True)
        out = model(**enc, decoder_input_ids=torch.zeros((2, 1), dtype=torch.long), output_hidden_states=True)
        h = out.decoder_hidden_states[-1][:, 0].mean(0)
        model.lm_head.weight[vocab[BOOSTED]] = 20 * h / h.norm()
    out = tmp_path_factory.mktemp("tiny-t5")
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def grader(t5_dir: Path, scoring: str, order: str = "question_first", **options: object) -> LLMGrader:
    cfg = GraderConfig(name="tiny-t5", backend="hf", bank="questions", prompt_class=QSR, model=str(t5_dir),
                       scoring=scoring, prompt_order=order, options={"torch_threads": 1, "batch_size": 4, **options})
    g = make_grader(cfg)
    assert isinstance(g, LLMGrader) and isinstance(g.llm, HFBackend) and g.llm.seq2seq
    return g


def test_logits_mode_is_one_decoder_step(t5_dir: Path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    g = grader(t5_dir, "logits")
    try:
        results = g.grade_batch(REQS)
        tok = AutoTokenizer.from_pretrained(t5_dir)
        assert g.llm.label_tokens(g.labels).describe() == {str(i): [tok.convert_tokens_to_ids(f"▁{i}")] for i in range(6)}
        ref_model = AutoModelForSeq2SeqLM.from_pretrained(t5_dir).eval()
        for req, r in zip(REQS, results, strict=True):
            assert r.parse_status == "ok"
            assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9) and 0.0 < r.label_mass <= 1.0
            # reference: the same input alone (no padding), one decoder step from the decoder start token
            enc = tok(g.render(req), return_tensors="pt")
            with torch.no_grad():
                logits = ref_model(**enc, decoder_input_ids=torch.tensor([[0]])).logits[0, -1]
            p = torch.softmax(logits.float(), -1)
            raw = {str(i): float(p[tok.convert_tokens_to_ids(f"▁{i}")]) for i in range(6)}
            assert math.isclose(r.label_mass, sum(raw.values()), rel_tol=1e-4)
            for k, v in raw.items():
                assert math.isclose(r.grade_probs[k], v / sum(raw.values()), rel_tol=1e-4, abs_tol=1e-7)
        assert {r.grade for r in results} == {3}  # the boosted label
        ident = g.identity()
        assert ident["model_type"] == "seq2seq" and ident["chat_template"] is None and len(ident["model_sha256"]) == 64
    finally:
        g.close()


def test_generate_mode_matches_logits(t5_dir: Path) -> None:
    lg, gen = grader(t5_dir, "logits"), grader(t5_dir, "generate", max_new_tokens=4)
    try:
        for a, b in zip(lg.grade_batch(REQS), gen.grade_batch(REQS), strict=True):
            assert b.extra["first_token_id"] == a.extra["top_token_id"]
            assert b.raw.split()[0] == "3"
            if b.parse_status == "ok":
                assert b.grade == a.grade == 3
            else:
                assert b.grade is None and b.error
        assert gen.identity()["model_sha256"] == lg.identity()["model_sha256"]
    finally:
        lg.close()
        gen.close()


def test_truncation_keeps_instruction_and_question(t5_dir: Path) -> None:
    g = grader(t5_dir, "logits", "passage_first", max_input_tokens=140)
    long = GradeRequest("q", "query", "p", " ".join([REQS[0].passage_text] * 20), "i", "question", REQS[0].item_text)
    try:
        text = g.render(long)
        assert g.llm.formatter.count(text) <= 140
        assert text.startswith("Can the question be answered") and text.endswith(f"\nQuestion: {REQS[0].item_text}")
        kept = text.split("Context: ", 1)[1].rsplit("\nQuestion: ", 1)[0]
        assert long.passage_text.startswith(kept) and len(kept) < len(long.passage_text)
        (r,) = g.grade_batch([long])
        assert r.extra["passage_truncated"] is True and r.parse_status == "ok"
    finally:
        g.close()


def test_cache_regrades_exactly_what_changed(t5_dir: Path, tmp_path: Path) -> None:
    """Through the shard runner's cache: an item edit regrades (passages x 1); a template or model change, all."""
    import shutil

    import yaml

    from autograde.grading.shard import grade_requests

    passages = {r.passage_id: r for r in REQS}
    items = [("q/i1", "Which musicians pioneered rock n roll?"), ("q/i2", "When did rock n roll begin?")]

    def reqs(second: str) -> list[GradeRequest]:
        return [GradeRequest(r.query_id, r.query_text, pid, r.passage_text, iid, "question", text)
                for pid, r in passages.items() for iid, text in (items[0], (items[1][0], second))]

    def run(model_dir: Path, template: str, second: str = items[1][1], version: str = "v1") -> dict:
        custom = tmp_path / f"custom-{version}.yaml"
        custom.write_text(yaml.safe_dump([{"name": "RateTest", "version": version, "kind": "rating",
                                           "item_kind": "question", "template": template,
                                           "labels": {str(i): i for i in range(6)}}]))
        cfg = GraderConfig(name="t", backend="hf", prompt_class=f"RateTest@{version}", model=str(model_dir), scoring="logits",
                           options={"torch_threads": 1, "custom_prompts": str(custom)})
        g = make_grader(cfg)
        try:
            return grade_requests(reqs(second), g, cfg, tmp_path / "cache").stats
        finally:
            g.close()

    n = len(passages) * 2
    base = "Rate 0-5 how well the context answers. Question: {question} Context: {context}"
    assert run(t5_dir, base)["computed"] == n
    assert run(t5_dir, base)["computed"] == 0
    edited = run(t5_dir, base, second="When exactly did rock n roll begin?")
    assert edited["computed"] == len(passages) and edited["cached"] == len(passages)  # passages x 1 item
    # a changed template is a new prompt version (the registry refuses to change v1 in place): all regraded
    assert run(t5_dir, base.replace("Rate 0-5", "Grade 0-5"), second="When exactly did rock n roll begin?",
               version="v2")["computed"] == n
    other = tmp_path / "other-t5"
    shutil.copytree(t5_dir, other)
    from transformers import T5ForConditionalGeneration

    m = T5ForConditionalGeneration.from_pretrained(other)
    with torch.no_grad():
        m.lm_head.weight.mul_(1.01)  # a different model: other weights, same architecture and tokenizer
    m.save_pretrained(other)
    assert run(other, base, second="When exactly did rock n roll begin?")["computed"] == n
