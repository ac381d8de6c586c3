"""The ``hf`` backend: Hugging Face transformers in-process (seq2seq like FLAN-T5, causal chat models, GGUF).

Config example::

    graders:
      - name: flan-qsr
        backend: hf
        model: google/flan-t5-large          # hub id, local directory, or a .gguf file
        prompt_class: QuestionSelfRatedUnanswerablePromptWithChoices
        scoring: logits
        options: {dtype: bfloat16, batch_size: 32, max_input_tokens: 512}

Logits mode reads the next-token distribution at the first answer position in one forward pass (seq2seq:
encoder + one decoder step from the decoder start token; causal: the last prompt position, left-padded).
Inputs are sorted by token length over the whole list given to ``grade_batch`` and cut into batches of
``batch_size``. Causal models share the KV of the batch's common token prefix (the instruction and the chat
template) instead of recomputing it per row (``prefix_cache``; same outputs up to float rounding).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from autograde.core.errors import GraderSetupError
from autograde.core.ids import content_hash, file_sha256
from autograde.core.log import logger
from autograde.grading.backend import Decoding, Failure, Generation, LabelScores
from autograde.grading.llm_grader import CommonOptions, LLMGrader
from autograde.grading.tokenizer import TokenizerBackend, TokenizerFormatter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autograde.config.model import GraderConfig


class Options(CommonOptions):
    """``options:`` of an ``hf`` grader."""

    gguf_file: str | None = Field(default=None, description="GGUF file name inside the model directory (or give model: path/to/file.gguf)")
    revision: str | None = Field(default=None, description="hub revision (commit, tag or branch) of a hub model id")
    tokenizer: str | None = Field(default=None, description="tokenizer id/directory if it differs from the model's")
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto: cuda when available, else cpu")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto", description="auto: float32 on cpu, bfloat16 on cuda (T5 overflows in float16)"
    )
    torch_threads: int | None = Field(default=None, ge=1, description="torch intra-op threads (set it from the rule's threads)")
    batch_size: int = Field(default=8, ge=1, description="prompts per forward pass (after sorting by length)")
    max_input_tokens: int | None = Field(
        default=512, ge=16, description="input token budget; only the passage is cut to fit (None: no limit)"
    )
    chat_template: Literal["auto", "never"] = Field(
        default="auto", description="auto: causal models with a chat template get the prompt as one user turn"
    )
    system_prompt: str | None = Field(default=None, description="system message for chat models (None: the template's default)")
    assistant_prefill: str = Field(default="", description="text appended after the chat generation prompt (e.g. 'Rating: ')")
    prefix_cache: bool = Field(default=True, description="causal logits mode: compute the batch's common prefix once")
    local_files_only: bool = Field(default=True, description="never download at run time (models must be in the local cache)")
    trust_remote_code: bool = Field(default=False, description="allow model repositories' own code")


_LOADED: dict[tuple[Any, ...], list[Any]] = {}
"""Models loaded in this process: key -> [model, tokenizer, is_seq2seq, number of graders holding it]."""

_FINGERPRINTS: dict[tuple[str, int, float], str] = {}


def _sha256_cached(path: Path) -> str:
    """sha256 of a file, computed once per (path, size, mtime) in this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime)
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = file_sha256(str(path))
    return _FINGERPRINTS[key]


@contextmanager
def _loading(owner: str, model: str, local_only: bool) -> Iterator[None]:
    """Turn the ways a model fails to load (not downloaded, no network, a broken folder) into one message with
    the fix, so a grading job fails with it in its log instead of library tracebacks."""
    try:
        yield
    except (OSError, ValueError) as exc:  # huggingface_hub's LocalEntryNotFoundError / HTTP errors are OSErrors
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = ("it is neither a local folder nor in the local Hugging Face cache" if local_only else
                 "it could not be read locally nor downloaded from the Hugging Face hub")
        raise GraderSetupError(
            f"{owner!r} (backend hf): cannot load model {model!r}: {where} ({type(exc).__name__}: {cause[:300]}) "
            f"(fix: download it first with huggingface-cli download {model} on a machine with internet, into the "
            "cache the jobs use ($HF_HOME), or set model: to a local folder or .gguf file; autograde validate checks "
            "this before any job)") from None


def _resolve_model(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """(directory or hub id, GGUF file name or None); ``model`` may name a .gguf file directly."""
    if gguf_file is None and model.endswith(".gguf") and Path(model).is_file():
        p = Path(model)
        return str(p.parent), p.name
    return model, gguf_file


def model_fingerprint(model: str, gguf_file: str | None, revision: str | None, commit_hash: str | None) -> dict[str, Any]:
    """What identifies the model's weights: a GGUF file's sha256, a local directory's content hash, or a hub revision."""
    path = Path(model)
    if gguf_file is not None and (path / gguf_file).is_file():
        return {"model_file": gguf_file, "model_sha256": _sha256_cached(path / gguf_file)}
    if path.is_dir():
        files = sorted(
            f for f in path.iterdir()
            if f.is_file() and not f.name.startswith(".") and f.suffix.lower() not in {".md", ".txt", ".png", ".jpg"}
        )
        return {"model_sha256": content_hash([[f.name, _sha256_cached(f)] for f in files], 64)}
    return {"model_revision": commit_hash or revision or "unknown"}


def _pad(seqs: list[list[int]], pad_id: int, side: str) -> tuple[Any, Any]:
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        if not s:
            continue
        if side == "left":
            ids[i, width - len(s):] = torch.tensor(s)
            mask[i, width - len(s):] = 1
        else:
            ids[i, : len(s)] = torch.tensor(s)
            mask[i, : len(s)] = 1
    return ids, mask


def _common_prefix_len(seqs: list[list[int]]) -> int:
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for s in seqs[1:]:
        k = 0
        while k < n and s[k] == first[k]:
            k += 1
        n = k
    return n


class HFBackend(TokenizerBackend):
    """A transformers model running in this process."""

    name = "hf"
    MIN_SHARED_PREFIX = 8

    def __init__(self, model: str | None, options: Options, owner: str = "hf") -> None:
        """Load ``model`` (hub id, local directory or .gguf file); ``owner`` names the grader or bank in logs."""
        import torch

        if not model:
            raise GraderSetupError(f"{owner!r} (backend hf) needs model: a hub id, local directory or .gguf file")
        self.owner = owner
        self.model_arg = model
        self.options: Options = options
        from autograde.core.runtime import set_threads

        set_threads(options.torch_threads)  # the grader's own count, else the job's (Snakemake threads)
        self.model_path, self.gguf_file = _resolve_model(model, options.gguf_file)
        load_kw: dict[str, Any] = {"local_files_only": options.local_files_only, "trust_remote_code": options.trust_remote_code}
        if options.revision:
            load_kw["revision"] = options.revision
        if self.gguf_file:
            load_kw["gguf_file"] = self.gguf_file
        if options.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        else:
            self.device = options.device
        if options.dtype == "auto":
            self.dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        else:
            self.dtype = getattr(torch, options.dtype)
        self._cache_key = (self.model_path, self.gguf_file, options.revision, options.tokenizer, str(self.dtype),
                           self.device, options.trust_remote_code)
        if self._cache_key in _LOADED:  # another grader in this process already holds this model: share it
            entry = _LOADED[self._cache_key]
            entry[3] += 1
            self.model, self.tokenizer, self.seq2seq = entry[0], entry[1], entry[2]
        else:
            with _loading(owner, self.model_path, options.local_files_only):
                self._load(owner, options, load_kw)
        self.pad_id = int(self.tokenizer.pad_token_id)
        chat = (not self.seq2seq and options.chat_template == "auto"
                and bool(getattr(self.tokenizer, "chat_template", None)))
        self.formatter = TokenizerFormatter(
            self.tokenizer, chat=chat, system_prompt=options.system_prompt,
            assistant_prefill=options.assistant_prefill, max_input_tokens=options.max_input_tokens,
        )
        self._fingerprint = model_fingerprint(self.model_path, self.gguf_file, options.revision,
                                              getattr(self.model.config, "_commit_hash", None))
        self._prefix_memo: tuple[tuple[int, ...], Any] | None = None
        self._has_logits_to_keep = "logits_to_keep" in _forward_params(self.model)

    # -- LLMBackend ----------------------------------------------------------------------------------------

    def continues_text(self) -> bool:
        return not self.seq2seq  # a seq2seq decoder starts from its start token, not from the input's end

    def identity(self, labels: Sequence[str] | None = None) -> dict[str, Any]:
        # Local weights are identified by their content hash, not by where they lie: the same GGUF file under
        # another path (a cluster node, a fresh venv) keeps its cache entries.
        ident: dict[str, Any] = {
            "model": self.model_label(),
            **self._fingerprint,
            "model_type": "seq2seq" if self.seq2seq else "causal",
            "dtype": str(self.dtype).replace("torch.", ""),
            "max_input_tokens": self.options.max_input_tokens,
            "chat_template": self.formatter.chat_template_digest(),
        }
        if self.options.tokenizer:
            ident["tokenizer"] = self.options.tokenizer
        if labels is not None:
            ident["label_tokens"] = self.label_tokens(labels).describe()
        return ident

    def _load(self, owner: str, options: Options, load_kw: dict[str, Any]) -> None:
        """Load config, model and tokenizer (shared with later graders of this process)."""
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        mconf = AutoConfig.from_pretrained(self.model_path, **load_kw)
        self.seq2seq = bool(getattr(mconf, "is_encoder_decoder", False))
        cls = AutoModelForSeq2SeqLM if self.seq2seq else AutoModelForCausalLM
        logger.info("hf %s: loading %s%s (%s, %s, %s)", owner, self.model_path,
                    f" [{self.gguf_file}]" if self.gguf_file else "", "seq2seq" if self.seq2seq else "causal",
                    self.device, self.dtype)
        # transformers decorates PreTrainedModel.to with functools.wraps, which mypy does not bind as a method
        # the config read above, not read again (a GGUF file is parsed once per read: seconds each)
        self.model = cls.from_pretrained(self.model_path, config=mconf, dtype=self.dtype, **load_kw).to(self.device).eval()  # type: ignore[arg-type]
        tok_path = options.tokenizer or self.model_path
        tok_kw = dict(load_kw) if options.tokenizer is None else {"local_files_only": options.local_files_only}
        self.tokenizer = AutoTokenizer.from_pretrained(tok_path, **tok_kw)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        _LOADED[self._cache_key] = [self.model, self.tokenizer, self.seq2seq, 1]

    def close(self) -> None:
        """Drop this grader's hold on the model; the last holder frees it."""
        if self.model is None:
            return
        entry = _LOADED.get(self._cache_key)
        if entry is not None:
            entry[3] -= 1
            if entry[3] <= 0:
                del _LOADED[self._cache_key]
        self.model = None
        self._prefix_memo = None
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:  # pragma: no cover
            pass

    # -- model operations --------------------------------------------------------------------------------------

    def _batches(self, encoded: list[list[int]]) -> list[list[int]]:
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
        bs = self.options.batch_size
        return [order[k: k + bs] for k in range(0, len(order), bs)]

    def label_probs(self, inputs: list[str], labels: Sequence[str]) -> list[LabelScores | Generation | Failure]:
        import torch

        tokens = self.label_tokens(labels)
        encoded = [self.formatter.encode(t) for t in inputs]
        out: list[LabelScores | Generation | Failure] = [Failure("not computed")] * len(inputs)
        label_ids = [torch.tensor(ids) for ids in tokens.ids]
        for batch in self._batches(encoded):
            with torch.inference_mode():
                logits = self.next_token_logits([encoded[i] for i in batch])
                logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            top = logprobs.argmax(dim=-1).tolist()
            for row, i in enumerate(batch):
                probs = {label: float(logprobs[row, ids].exp().sum())
                         for label, ids in zip(tokens.labels, label_ids, strict=True)}
                out[i] = LabelScores(probs, extra={"top_token": self.tokenizer.decode([top[row]]), "top_token_id": top[row]})
            self.record_usage(sum(len(encoded[i]) for i in batch), 0)
        return out

    def next_token_logits(self, seqs: list[list[int]]) -> Any:
        """Logits (batch, vocab) of the first answer token for each tokenized input."""
        import torch

        dev = self.device
        if self.seq2seq:
            ids, mask = _pad(seqs, self.pad_id, "right")
            start = self.model.config.decoder_start_token_id
            start = self.pad_id if start is None else int(start)
            dec = torch.full((len(seqs), 1), start, dtype=torch.long)
            res = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), decoder_input_ids=dec.to(dev))
            return res.logits[:, -1, :]
        shared = _common_prefix_len(seqs) if self.options.prefix_cache and len(seqs) > 1 else 0
        shared = min(shared, min(len(s) for s in seqs) - 1)
        if shared >= self.MIN_SHARED_PREFIX:
            try:
                return self._logits_with_prefix(seqs, shared)
            except (TypeError, ValueError, AttributeError, NotImplementedError, RuntimeError) as exc:
                logger.warning("hf %s: shared-prefix cache unsupported by this model (%s); turning it off",
                               self.owner, exc)
                self.options = self.options.model_copy(update={"prefix_cache": False})
                self._prefix_memo = None
        ids, mask = _pad(seqs, self.pad_id, "left")
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        kw = {"logits_to_keep": 1} if self._has_logits_to_keep else {}
        res = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev), use_cache=False, **kw)
        return res.logits[:, -1, :]

    def _prefix_kv(self, prefix: list[int]) -> Any:
        import torch

        key = tuple(prefix)
        if self._prefix_memo is not None and self._prefix_memo[0] == key:
            return self._prefix_memo[1]
        ids = torch.tensor([prefix], dtype=torch.long, device=self.device)
        res = self.model(input_ids=ids, use_cache=True, **({"logits_to_keep": 1} if self._has_logits_to_keep else {}))
        cache = res.past_key_values
        if hasattr(cache, "layers"):
            layers = [(layer.keys, layer.values) for layer in cache.layers]
        else:  # transformers < 4.56
            layers = list(zip(cache.key_cache, cache.value_cache, strict=True))
        self._prefix_memo = (key, layers)
        return layers

    def _logits_with_prefix(self, seqs: list[list[int]], shared: int) -> Any:
        """Forward the suffixes (left-padded after the shared prefix) on top of the prefix's KV cache."""
        import torch
        from transformers.cache_utils import DynamicCache

        dev = self.device
        layers = self._prefix_kv(seqs[0][:shared])
        b = len(seqs)
        data = [(k.expand(b, -1, -1, -1), v.expand(b, -1, -1, -1)) for k, v in layers]
        try:
            cache = DynamicCache(ddp_cache_data=data)
        except TypeError:  # older transformers
            # the classmethod exists only in the older transformers this branch serves (the installed one dropped it)
            cache = DynamicCache.from_legacy_cache(tuple(data))  # type: ignore[attr-defined]
        ids, smask = _pad([s[shared:] for s in seqs], self.pad_id, "left")
        mask = torch.cat([torch.ones((b, shared), dtype=torch.long), smask], dim=1)
        pos = shared + (smask.cumsum(-1) - 1).clamp(min=0)
        kw = {"logits_to_keep": 1} if self._has_logits_to_keep else {}
        res = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev),
                         past_key_values=cache, use_cache=True, **kw)
        return res.logits[:, -1, :]

    def generate(self, inputs: list[str], decoding: Decoding) -> list[Generation | Failure]:
        import torch
        from transformers import GenerationConfig

        encoded = [self.formatter.encode(t) for t in inputs]
        out: list[Generation | Failure] = [Failure("not computed")] * len(inputs)
        eos = self.tokenizer.eos_token_id
        gen_eos = self.model.generation_config.eos_token_id
        sample = bool(decoding.temperature)
        sampling = {"do_sample": True, "temperature": decoding.temperature, "top_p": decoding.top_p} if sample else {
            "do_sample": False}
        if sample:
            torch.manual_seed(decoding.seed or 0)
        gcfg = GenerationConfig(
            max_new_tokens=decoding.max_new_tokens, num_beams=1, pad_token_id=self.pad_id, **sampling,
            eos_token_id=gen_eos if gen_eos is not None else eos,
            decoder_start_token_id=getattr(self.model.generation_config, "decoder_start_token_id", None),
            bos_token_id=getattr(self.model.generation_config, "bos_token_id", None),
        )
        for batch in self._batches(encoded):
            ids, mask = _pad([encoded[i] for i in batch], self.pad_id, "right" if self.seq2seq else "left")
            with torch.inference_mode():
                seq = self.model.generate(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                          generation_config=gcfg)
            new = seq[:, 1:] if self.seq2seq else seq[:, ids.shape[1]:]
            new = new.cpu().tolist()
            stops = {t for t in (gcfg.eos_token_id if isinstance(gcfg.eos_token_id, list) else [gcfg.eos_token_id])
                     if t is not None}
            for row, i in enumerate(batch):
                toks = new[row]
                out[i] = Generation(self.tokenizer.decode(toks, skip_special_tokens=True),
                                    first_token_id=toks[0] if toks else None)
                self.record_usage(len(encoded[i]), _generated_length(toks, stops, self.pad_id))
        return out


def _generated_length(toks: list[int], stops: set[int], pad_id: int | None) -> int:
    """Tokens a row really generated: through its first stop token, else without the trailing padding.

    >>> _generated_length([5, 6, 2, 0, 0], {2}, 0), _generated_length([5, 6, 0, 0], {2}, 0)
    (3, 2)
    """
    for n, t in enumerate(toks, 1):
        if t in stops:
            return n
    n = len(toks)
    while n and toks[n - 1] == pad_id:
        n -= 1
    return n


def _forward_params(model: Any) -> set[str]:
    import inspect

    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        return set()


def make_backend(model: str | None, options: Options, owner: str = "hf") -> HFBackend:
    """Load an ``hf`` model (for graders and the test-bank generator)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return HFBackend(model, options, owner)


def make_grader(config: GraderConfig, options: Options) -> LLMGrader:
    """Build an ``hf`` grader (checks the prompt set-up, then loads the model)."""
    return LLMGrader(config, options, lambda: make_backend(config.model, options, config.name))
