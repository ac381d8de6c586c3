"""The ``bank_generation:`` config section: one entry per test bank an LLM drafts (Phase 1).

>>> cfg = BankGenerationConfig.model_validate({"backend": "openai", "model": "gpt-4o-mini"})
>>> cfg.prompt_class, cfg.items_per_query, cfg.min_items_required, cfg.grade_with
('QuestionGenerationDL', 10, 5, 'generated')
>>> add_generated_banks({"bank_generation": {"questions": {"model": "m"}}})["banks"]
{'questions': 'results/banks/questions.jsonl.gz'}

A generated bank is a bank like the ones under ``banks:``: :func:`add_generated_banks` (run by the ``Config``
model before validation) enters the file graders read under ``banks.<name>``: the generated bank
``<results_dir>/banks/<name>.jsonl.gz`` (``grade_with: generated``) or the hand-edited copy
(``grade_with: edited``, made by ``autograde bank init-edit``). This module holds models only and imports no
backend.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from autograde.core.errors import InvalidValueError
from autograde.core.ids import NAME_RE
from autograde.core.schema import Strict
from autograde.grading.registry import LLMBackendName
from autograde.grading.spec import ModelSpec

if TYPE_CHECKING:
    from autograde.config.model import Config





class DecodingConfig(Strict):
    """How the model decodes (part of the identity of every cached answer)."""

    max_new_tokens: int = Field(default=512, ge=16, le=16384, description="tokens generated per answer; too few cut the JSON off (then a repair prompt follows)")
    temperature: float | None = Field(default=None, ge=0, description="null: greedy (hf, vllm) or the openai backend's options.temperature; > 0: sampling")
    top_p: float = Field(default=1.0, gt=0, le=1, description="nucleus sampling mass (with temperature > 0)")
    seed: int | None = Field(default=0, description="sampling seed (with temperature > 0)")


class BankGenerationConfig(ModelSpec):
    """One generated test bank: prompt class, model and decoding, validation limits, and which bank grading uses."""

    prompt_class: str = Field(default="QuestionGenerationDL", description="a generation prompt class (autograde prompts --kind generation): QuestionGenerationDL, NuggetGenerationDL (TREC DL: {query_text}), QuestionGenerationCAR, NuggetGenerationCAR (TREC CAR: {query_title} / {query_subtopic}), Name@wb1 for the workbench's strings, or a custom one (options.custom_prompts)")
    backend: LLMBackendName = Field(default="openai", description="hf | vllm | openai (the grader backends, same options: blocks)")
    model: str = Field(description="model id, local directory or GGUF file (hf, vllm), or the server's model name (openai)")
    options: dict[str, Any] = Field(default_factory=dict, description="backend options, as for graders (e.g. base_url, api_key_env, concurrency for openai; device, dtype, gguf_file for hf; custom_prompts)")
    items_per_query: int = Field(default=10, ge=1, le=200, description="items asked for per query ({n_items} in the prompt)")
    min_items: int | None = Field(default=None, ge=1, description="fewest distinct items an answer must hold (null: half of items_per_query, rounded up)")
    max_item_words: int = Field(default=40, ge=1, description="an item with more words makes the answer invalid (it is asked again)")
    max_item_chars: int = Field(default=400, ge=10, description="an item with more characters makes the answer invalid")
    repair_attempts: int = Field(default=2, ge=0, le=10, description="an invalid answer is asked again with the repair prompt (naming the problem) up to this many times; then the query is recorded as a failure")
    decoding: DecodingConfig = Field(default_factory=DecodingConfig, description="max_new_tokens, temperature, top_p, seed")
    batch_size: int = Field(default=16, ge=1, description="prompts per backend call; the cache is written after every call")
    subtopic_separator: str = Field(default=" / ", min_length=1, description="CAR-style prompts: the query text is 'title<sep>subtopic' (the last part is the subtopic); a query without it uses its whole text for both")
    allow_failures: float = Field(default=0.0, ge=0.0, lt=1.0, description="share of the queries that may end without items (invalid after every repair) and still give a bank; above it the bank is not written")
    test_collection: str = Field(default="autograde", description="the test_collection field of the bank's query lines")
    grade_with: Literal["generated", "edited"] = Field(default="generated", description="which bank graders (bank: <name>) read: the generated one (results/banks/<name>.jsonl.gz) or the edited copy (see 'edited')")
    edited: str | None = Field(default=None, description="the hand-edited copy graders read with grade_with: edited (null: banks/<name>.edited.jsonl); create it with: autograde bank init-edit")

    @property
    def min_items_required(self) -> int:
        """``min_items``, or half of ``items_per_query`` rounded up."""
        return self.min_items if self.min_items is not None else max(1, math.ceil(self.items_per_query / 2))

    @model_validator(mode="after")
    def _min_le_items(self) -> BankGenerationConfig:
        if self.min_items is not None and self.min_items > self.items_per_query:
            raise ValueError(f"min_items ({self.min_items}) is larger than items_per_query ({self.items_per_query})")
        return self

    def generation_settings(self) -> dict[str, Any]:
        """What determines the generated items (for the job digests): everything but which bank grading reads,
        the failure allowance and the label of the query lines."""
        return self.model_dump(mode="json", exclude={"grade_with", "edited", "allow_failures", "test_collection"})


def generated_bank_path(results_dir: str, name: str) -> str:
    """Where the workflow writes generated bank ``name``."""
    from autograde.core.layout import Layout

    return Layout.of(results_dir).bank(name)


def edited_bank_path(name: str, cfg: BankGenerationConfig | dict[str, Any]) -> str:
    """The hand-edited copy of generated bank ``name`` (outside results/: no workflow command deletes it)."""
    edited = cfg.get("edited") if isinstance(cfg, dict) else cfg.edited
    return str(edited) if edited else f"banks/{name}.edited.jsonl"


def add_generated_banks(raw: Any) -> Any:
    """The raw config with every generated bank entered under ``banks:`` (the file its graders read).

    Raises ValueError when a name is both a hand-made bank and a generated one (with different files).
    Malformed sections are left for the model's validation to report.
    """
    if not isinstance(raw, dict):
        return raw
    generated = raw.get("bank_generation")
    if not isinstance(generated, dict) or not generated:
        return raw
    banks = raw.get("banks")
    if banks is not None and not isinstance(banks, dict):
        return raw
    out = dict(banks or {})
    results = raw.get("results_dir") or "results"
    for name, cfg in generated.items():
        if not re.match(NAME_RE, str(name)):
            raise InvalidValueError(f"bank_generation: bank name {name!r} must match {NAME_RE} (it is used in file names)")
        if not isinstance(cfg, dict):
            continue
        path = (edited_bank_path(str(name), cfg) if cfg.get("grade_with") == "edited"
                else generated_bank_path(str(results), str(name)))
        if name in out and out[name] != path:
            raise InvalidValueError(f"bank {name!r} is both under banks: ({out[name]}) and under bank_generation: "
                             f"(it reads {path}); rename one of them")
        out[name] = path
    return {**raw, "banks": out}


def generated_banks(config: Config) -> dict[str, BankGenerationConfig]:
    """The ``bank_generation:`` entries of a validated config (empty when the section is absent)."""
    return dict(config.bank_generation)


def banks_read_at_parse_time(config: Config) -> dict[str, str]:
    """The banks the workflow reads when it builds its DAG: every bank except generated ones graded as generated
    (their file is an output of the workflow and may not exist yet)."""
    skip = {name for name, g in generated_banks(config).items() if g.grade_with == "generated"}
    return {name: path for name, path in config.banks.items() if name not in skip}


def is_graded_as_generated(config: Config, bank: str) -> bool:
    """Whether graders of ``bank`` read the workflow's generated file (not a hand-made or edited bank)."""
    g = config.bank_generation.get(bank)
    return g is not None and g.grade_with == "generated"
