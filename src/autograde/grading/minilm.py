"""all-MiniLM-L6-v2 (a 6-layer BERT encoder) in plain torch: the embedded grader's encoder without transformers.

Why: a grading job of the embedded grader is short (seconds of encoding), and importing transformers' model classes
costs more than the work (they pull in torch.distributed, the hub and attention kernels: about 3 s of CPU per job
here, measured in benchmarks/embedded_load.py). This module reads the same ``model.safetensors`` and the same
``tokenizer.json`` (with the ``tokenizers`` library, which transformers' fast tokenizer wraps) and computes the same
forward pass as transformers' ``BertModel`` in eval mode (absolute positions, token type 0, exact GELU,
post-LayerNorm, scaled-dot-product attention without a mask for one unpadded text), operation for operation, so the
vectors equal transformers' (tests/grading/test_minilm.py checks them against ``AutoModel`` on real texts).

Only what the embedded grader needs: one text at a time, no padding, no attention mask, inference only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class MiniLMTokenizer:
    """The encoder's tokenizer alone (``tokenizer.json``: lower-casing WordPiece, [CLS] ... [SEP]), for counting tokens
    without loading the weights."""

    def __init__(self, model_dir: str | Path, max_length: int) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=max_length)

    def token_ids(self, text: str) -> list[int]:
        return list(self._tok.encode(text).ids)


class MiniLMEncoder:
    """A BERT encoder (``config.json``'s sizes) with the weights of ``model.safetensors`` in ``model_dir``."""

    def __init__(self, model_dir: str | Path, max_length: int) -> None:
        from safetensors.torch import load_file

        from autograde.core.errors import GraderSetupError

        folder = Path(model_dir)
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu" or cfg.get(
                "position_embedding_type", "absolute") != "absolute":
            raise GraderSetupError(f"{folder / 'config.json'}: not a BERT encoder with GELU and absolute positions "
                             f"(model_type {cfg.get('model_type')!r}); the embedded grader reads all-MiniLM-L6-v2 only")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg["layer_norm_eps"])
        self.hidden = int(cfg["hidden_size"])
        self.max_length = min(max_length, int(cfg["max_position_embeddings"]))
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.tokenizer = MiniLMTokenizer(folder, self.max_length)

    def token_ids(self, text: str) -> list[int]:
        """The ids the encoder reads for ``text``: [CLS] text [SEP], truncated to ``max_length``."""
        return self.tokenizer.token_ids(text)

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        import torch.nn.functional as F

        return F.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        import torch.nn.functional as F

        return F.layer_norm(x, (self.hidden,), self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps)

    def last_hidden_state(self, ids: list[int]) -> torch.Tensor:
        """The encoder's output for one text's ids: shape (1, len(ids), hidden)."""
        import torch
        import torch.nn.functional as F

        n = len(ids)
        input_ids = torch.tensor([ids], dtype=torch.long)
        positions = torch.arange(n, dtype=torch.long).unsqueeze(0)
        types = torch.zeros((1, n), dtype=torch.long)
        with torch.inference_mode():
            x = F.embedding(input_ids, self.w["embeddings.word_embeddings.weight"])
            x = x + F.embedding(types, self.w["embeddings.token_type_embeddings.weight"])
            x = x + F.embedding(positions, self.w["embeddings.position_embeddings.weight"])
            x = self._norm(x, "embeddings.LayerNorm")
            head = self.hidden // self.heads
            shape = (1, n, self.heads, head)
            for i in range(self.layers):
                p = f"encoder.layer.{i}"
                q = self._linear(x, f"{p}.attention.self.query").view(*shape).transpose(1, 2)
                k = self._linear(x, f"{p}.attention.self.key").view(*shape).transpose(1, 2)
                v = self._linear(x, f"{p}.attention.self.value").view(*shape).transpose(1, 2)
                a = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=head**-0.5,
                                                   is_causal=False)
                a = a.transpose(1, 2).contiguous().reshape(1, n, -1).contiguous()
                x = self._norm(self._linear(a, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
                h = F.gelu(self._linear(x, f"{p}.intermediate.dense"))
                x = self._norm(self._linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def embed(self, text: str) -> tuple[torch.Tensor, int]:
        """(unit vector of the mean of the output tokens, number of tokens read) for one text."""
        import torch

        ids = self.token_ids(text)
        out = self.last_hidden_state(ids)
        return torch.nn.functional.normalize(out.mean(1), p=2, dim=1)[0], len(ids)
