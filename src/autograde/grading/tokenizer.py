"""Fitting a passage into a token budget and formatting prompts with a Hugging Face tokenizer (hf and vllm).

Only the passage is ever cut (never the instruction, the item or the chat template), at a token boundary of the
original text, so the kept text is the user's text, not a decode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from autograde.core.ids import content_hash
from autograde.core.log import logger
from autograde.grading.backend import LLMBackend
from autograde.grading.labels import LabelTokens


def fit_passage(
    build: Callable[[str], str],
    passage: str,
    count: Callable[[str], int],
    cut_points: Callable[[str], list[int]],
    budget: int | None,
) -> tuple[str, bool]:
    """The model input ``build(passage')`` with ``passage'`` the longest token prefix of ``passage`` that fits.

    Only the passage is cut, never the instruction, the question/nugget or the chat template; ``cut_points``
    gives the passage's token end offsets (characters) so the kept text is the original text, not a decode.
    If the template alone exceeds ``budget`` the passage becomes empty and the input stays over budget.
    Returns (model input, whether the passage was cut).
    """
    full = build(passage)
    if budget is None:
        return full, False
    n = count(full)
    if n <= budget:
        return full, False
    ends = cut_points(passage)
    keep = max(0, min(len(ends), budget - count(build(""))))
    while True:
        text = build(passage[: ends[keep - 1]] if keep > 0 else "")
        n = count(text)
        if n <= budget or keep == 0:
            break
        keep = max(0, keep - max(1, n - budget))
    if n > budget:
        logger.warning("prompt without its passage already has %d tokens > budget %d; the passage was dropped", n, budget)
    return text, True


class TokenizerFormatter:
    """Chat formatting, token counting and passage cut points with a Hugging Face tokenizer (hf and vllm).

    ``chat``: wrap the prompt as one user turn with the tokenizer's chat template and the generation prompt
    (plus ``assistant_prefill``); the resulting string is tokenized without adding special tokens again.
    Without chat (seq2seq models), the prompt is tokenized with the tokenizer's special tokens (T5: ``</s>``).
    """

    def __init__(
        self, tokenizer: Any, *, chat: bool, system_prompt: str | None = None, assistant_prefill: str = "",
        max_input_tokens: int | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.chat = chat
        self.system_prompt = system_prompt
        self.assistant_prefill = assistant_prefill
        self.max_input_tokens = max_input_tokens
        self.add_special_tokens = not chat
        self._label_tokens: dict[tuple[str, ...], LabelTokens] = {}

    def wrap(self, text: str) -> str:
        if not self.chat:
            return text
        messages = []
        if self.system_prompt is not None:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": text})
        out = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return out + self.assistant_prefill

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=self.add_special_tokens)["input_ids"])

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def cut_points(self, passage: str) -> list[int]:
        """Character end offsets of the passage's tokens (fast tokenizers); whitespace words otherwise."""
        try:
            enc = self.tokenizer(passage, add_special_tokens=False, return_offsets_mapping=True)
            ends = [end for start, end in enc["offset_mapping"] if end > start]
            if ends:
                return sorted(set(ends))
        except (NotImplementedError, TypeError, ValueError, KeyError):
            pass
        return [m.end() for m in re.finditer(r"\S+", passage)]

    def fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        return fit_passage(build, passage, self.count, self.cut_points, self.max_input_tokens)

    def label_tokens(self, labels: Sequence[str]) -> LabelTokens:
        """The token ids of each label (computed once per label set, then remembered)."""
        key = tuple(labels)
        if key not in self._label_tokens:
            self._label_tokens[key] = LabelTokens.build(
                labels,
                lambda s: list(self.tokenizer(s, add_special_tokens=False)["input_ids"]),
                lambda ids: self.tokenizer.decode(ids),
            )
            logger.info("label tokens %s", self._label_tokens[key].describe())
        return self._label_tokens[key]

    def chat_template_digest(self) -> str | None:
        """Hash of the chat template string (it shapes every input), None without chat."""
        if not self.chat:
            return None
        return content_hash([getattr(self.tokenizer, "chat_template", None), self.system_prompt, self.assistant_prefill], 16)


class TokenizerBackend(LLMBackend):
    """An LLM backend with a Hugging Face tokenizer (hf, vllm): formatting, fitting and label tokens through its
    :class:`TokenizerFormatter`, so both send identical token ids for the same prompt."""

    formatter: TokenizerFormatter
    model_arg: str
    _fingerprint: dict[str, Any]

    def wrap(self, text: str) -> str:
        return self.formatter.wrap(text)

    def count_input_tokens(self, text: str) -> int | None:
        return self.formatter.count(text)

    def fit(self, build: Callable[[str], str], passage: str) -> tuple[str, bool]:
        return self.formatter.fit(build, passage)

    def label_tokens(self, labels: Sequence[str]) -> LabelTokens:
        """The token ids of each label (computed once per label set)."""
        return self.formatter.label_tokens(labels)

    def model_label(self) -> str:
        """The model as the identity names it: local weights by file name (their content hash identifies them, so
        the same file under another path, on a cluster node or in a fresh venv, keeps its cache entries)."""
        from pathlib import Path

        return Path(self.model_arg).name if "model_sha256" in self._fingerprint else self.model_arg
