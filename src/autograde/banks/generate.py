"""The test-bank generator: one generation prompt per query, through any LLM backend, cache first.

For each query the prompt class is rendered (``{query_text}`` or ``{query_title}`` / ``{query_subtopic}``,
``{n_items}``, ``{instruction}``), wrapped by the backend (chat template) and sent, in batches, to the backend's
``generate``. Each answer is parsed and validated (:mod:`autograde.banks.parse`). An unusable answer is asked
again with the prompt's repair template, which shows the answer and names its problem, up to ``repair_attempts``
times (an identical repair prompt is answered from the cache, as the model would answer it the same way); a query still
without a valid answer is recorded as a failure with every attempt's problem, never as an empty list of items.

Every answer is cached under the content of its model input and the generator's identity (backend and model,
decoding, prompt class and digest): a rerun makes no model call and rebuilds the same bank, and a job killed
between backend calls resumes with the answers it already had. An endpoint that gives no answer (after the
backend's own retries) is a transient failure: not cached, retried on the next run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from autograde.banks.cache import GenerationCache
from autograde.banks.parse import GeneratedItems, ItemLimits, extract_items, validation_problem
from autograde.core.errors import GraderSetupError
from autograde.core.ids import item_id
from autograde.core.log import logger, progress_bar
from autograde.grading.backend import Decoding, Failure, Generation, LLMBackend
from autograde.grading.cache import cache_key, identity_hash
from autograde.io.banks.model import Bank, BankItem

if TYPE_CHECKING:
    from autograde.config.banks import BankGenerationConfig
    from autograde.grading.prompts import PromptClass

GENERATOR_CODE_VERSION = "1"
"""Bump when a change here changes what is sent to the model for the same config (invalidates cached answers)."""


@dataclass(frozen=True)
class QueryPrompt:
    """What a generation prompt needs of one query."""

    query_id: str
    query_text: str
    query_title: str
    query_subtopic: str


def split_title_subtopic(text: str, separator: str = " / ") -> tuple[str, str]:
    """(title, subtopic) of a TREC CAR style query ``title / subtopic``; the whole text for both without one.

    >>> split_title_subtopic("Rock music / Origins / 1950s")
    ('Rock music', '1950s')
    >>> split_title_subtopic("when did rock n roll begin?")
    ('when did rock n roll begin?', 'when did rock n roll begin?')
    """
    parts = [p.strip() for p in text.split(separator)]
    if len(parts) < 2 or not parts[0] or not parts[-1]:
        return text, text
    return parts[0], parts[-1]


def query_prompts(queries: dict[str, str], separator: str = " / ") -> list[QueryPrompt]:
    """One :class:`QueryPrompt` per query, in the order given."""
    return [QueryPrompt(q, t, *split_title_subtopic(t, separator)) for q, t in queries.items()]


@dataclass
class Attempt:
    """One answer of the model for one query."""

    round: int
    cache_key: str
    cached: bool
    how: str = ""
    problem: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class QueryResult:
    """The outcome for one query: its validated items, or the failure (with every attempt)."""

    query_id: str
    query_text: str
    items: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    failure: str | None = None
    transient: bool = False
    last_answer: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and bool(self.items)

    def failure_record(self, bank: str) -> dict[str, Any]:
        """The line of the failures file for this query."""
        return {"bank": bank, "query_id": self.query_id, "query_text": self.query_text, "error": self.failure,
                "transient": self.transient, "attempts": [asdict(a) for a in self.attempts],
                "last_answer": self.last_answer}


def resolve_generation_prompt(name: str, cfg: BankGenerationConfig) -> PromptClass:
    """The generation prompt class of bank ``name`` (custom prompts loaded first); raises with the fix."""
    from autograde.grading.prompts import get_prompt, load_custom_prompts

    try:
        custom = cfg.options.get("custom_prompts")
        if custom:
            load_custom_prompts(str(custom))
        prompt = get_prompt(cfg.prompt_class)
    except (KeyError, ValueError) as exc:
        raise GraderSetupError(f"bank_generation.{name}.prompt_class: {exc.args[0] if exc.args else exc} "
                               "(fix: pick one from 'autograde prompts --kind generation')") from None
    if prompt.kind != "generation":
        raise GraderSetupError(f"bank_generation.{name}.prompt_class: {prompt.config_name} is a {prompt.kind} "
                               "(grading) prompt (fix: pick a generation prompt from 'autograde prompts --kind "
                               "generation')")
    return prompt


class BankGenerator:
    """Generates the items of bank ``name`` with one backend (see the module docstring)."""

    def __init__(self, name: str, cfg: BankGenerationConfig, backend: LLMBackend, cache_dir: str | Path,
                 prompt: PromptClass | None = None) -> None:
        self.name = name
        self.cfg = cfg
        self.backend = backend
        self.cache_dir = cache_dir
        self.prompt = prompt or resolve_generation_prompt(name, cfg)
        self.limits = ItemLimits(cfg.min_items_required, cfg.max_item_words, cfg.max_item_chars)
        d = cfg.decoding
        self.decoding = Decoding(max_new_tokens=d.max_new_tokens, temperature=d.temperature, top_p=d.top_p,
                                 seed=d.seed)
        self.kind = self.prompt.item_kind

    def close(self) -> None:
        self.backend.close()

    # -- identity and provenance -------------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """Everything that determines an answer except the model input (for cache keys). Never secrets."""
        return {
            "task": "test-bank generation",
            "generator_code": GENERATOR_CODE_VERSION,
            "prompt_class": self.prompt.name,
            "prompt_version": self.prompt.version,
            "prompt_digest": self.prompt.digest(),
            "decoding": self.decoding.describe(),
            "backend": self.backend.name,
            **self.backend.identity(None),
        }

    def provenance(self) -> dict[str, Any]:
        """The ``info`` of every query line of the generated bank (no timestamps: reruns write the same bytes)."""
        return {
            "prompt_target": self.prompt.json_field,
            "format_instruction": "json",
            "generator": "autograde",
            "bank": self.name,
            "backend": self.cfg.backend,
            "model": self.cfg.model,
            "model_identity": identity_hash(self.backend.identity(None)),
            "prompt_class": self.prompt.name,
            "prompt_version": self.prompt.version,
            "prompt_digest": self.prompt.digest(),
            "decoding": self.decoding.describe(),
            "items_per_query": self.cfg.items_per_query,
            "generator_id": identity_hash(self.identity()),
        }

    # -- rendering ---------------------------------------------------------------------------------------------

    def first_prompt(self, q: QueryPrompt) -> str:
        from autograde.grading.prompts import render_generation

        return render_generation(self.prompt, query_text=q.query_text, n_items=self.cfg.items_per_query,
                                 query_title=q.query_title, query_subtopic=q.query_subtopic)

    def repair_prompt(self, first: str, answer: str, problem: str) -> str:
        from autograde.grading.prompts import render_repair

        return render_repair(self.prompt, first, answer, problem)

    # -- generation --------------------------------------------------------------------------------------------

    def _generate(self, inputs: list[str]) -> list[Generation | Failure]:
        """The backend's answers (never raises: an exception fails the call's inputs transiently)."""
        try:
            out = self.backend.generate(inputs, self.decoding)
        except Exception as exc:  # one bad call must not lose the answers already cached
            logger.exception("bank %s: generate failed for %d prompts", self.name, len(inputs))
            return [Failure(f"{type(exc).__name__}: {exc}", deterministic=False)] * len(inputs)
        if len(out) != len(inputs):
            return [Failure(f"backend returned {len(out)} answers for {len(inputs)} prompts")] * len(inputs)
        return out

    def _generate_missing(self, cache: GenerationCache, by_key: dict[str, str],
                          rnd: int) -> tuple[dict[str, str], dict[str, str]]:
        """Generate the prompts not in the cache, in batches, caching each batch's answers at once.

        Returns the new answers and the failures, both by cache key."""
        fresh: dict[str, str] = {}
        failed: dict[str, str] = {}
        todo = list(by_key)
        batches = [todo[i: i + self.cfg.batch_size] for i in range(0, len(todo), self.cfg.batch_size)]
        with progress_bar(len(todo), f"bank {self.name} round {rnd}", "prompts") as bar:
            for batch in batches:
                outs = self._generate([by_key[k] for k in batch])
                good = []
                for k, out in zip(batch, outs, strict=True):
                    if isinstance(out, Failure):
                        failed[k] = out.error
                    else:
                        fresh[k] = out.text
                        good.append((k, out.text))
                cache.put_texts(good)
                bar.update(len(batch))
        return fresh, failed

    def _settle(self, res: QueryResult, text: str, rnd: int, key: str, was_cached: bool) -> str | None:
        """Check one answer into its query's result: its items when valid, else its failure after the last
        round. Returns the problem a repair prompt must address in the next round, else None."""
        res.last_answer = text
        attempt, items = self.check(text, rnd, key, was_cached)
        res.attempts.append(attempt)
        if attempt.problem is None:
            res.items = items
            return None
        if rnd < self.cfg.repair_attempts:
            return attempt.problem
        res.failure = (f"no valid answer in {len(res.attempts)} attempt(s) (1 + "
                       f"{self.cfg.repair_attempts} repair(s)); last problem: {attempt.problem}")
        return None

    def run(self, queries: list[QueryPrompt]) -> tuple[list[QueryResult], dict[str, Any]]:
        """Generate and validate the items of ``queries``; returns one result per query (in order) and stats."""
        t0 = time.perf_counter()
        identity = self.identity()
        cache = GenerationCache(self.cache_dir, identity)
        results = {q.query_id: QueryResult(q.query_id, q.query_text) for q in queries}
        first = {q.query_id: self.first_prompt(q) for q in queries}
        current = dict(first)
        pending = [q.query_id for q in queries]
        calls = cached = repairs = 0
        model_s = 0.0
        try:
            for rnd in range(self.cfg.repair_attempts + 1):
                if not pending:
                    break
                inputs = {qid: self.backend.wrap(current[qid]) for qid in pending}
                keys = {qid: cache_key(inputs[qid], identity) for qid in pending}
                stored = cache.texts(set(keys.values()))
                by_key = {keys[qid]: inputs[qid] for qid in pending if keys[qid] not in stored}
                logger.info("bank %s round %d: %d prompt(s), %d answer(s) from the cache, %d to generate",
                            self.name, rnd, len(pending), len(pending) - sum(1 for q in pending if keys[q] in by_key),
                            len(by_key))
                t_model = time.perf_counter()
                fresh, failed = self._generate_missing(cache, by_key, rnd)
                calls += len(by_key)
                model_s += time.perf_counter() - t_model
                still: list[str] = []
                for qid in pending:
                    res, k = results[qid], keys[qid]
                    if k in failed:
                        res.failure = f"no answer from the model ({failed[k]})"
                        res.transient = True
                        continue
                    cached += k in stored
                    text = stored[k] if k in stored else fresh[k]
                    problem = self._settle(res, text, rnd, k, k in stored)
                    if problem is not None:
                        current[qid] = self.repair_prompt(first[qid], text, problem)
                        repairs += 1
                        still.append(qid)
                pending = still
        finally:
            cache.close()
        out = [results[q.query_id] for q in queries]
        stats = {
            "bank": self.name, "generator_id": identity_hash(identity), "queries": len(out),
            "ok": sum(r.ok for r in out), "failed": sum(not r.ok for r in out),
            "failed_transient": sum(r.transient for r in out), "items": sum(len(r.items) for r in out),
            "model_calls": calls, "cached": cached, "repairs": repairs,
            "model_seconds": round(model_s, 3), "total_seconds": round(time.perf_counter() - t0, 3),
        }
        return out, stats

    def check(self, text: str, rnd: int = 0, key: str = "", was_cached: bool = False) -> tuple[Attempt, list[str]]:
        """Parse and validate one answer: (the attempt, with its problem or None; the valid items)."""
        ext = extract_items(text, self.prompt.json_field)
        attempt = Attempt(rnd, key, was_cached, ext.how, ext.problem, list(ext.notes))
        if ext.problem is not None or ext.items is None:
            return attempt, []
        try:
            valid = GeneratedItems.from_raw(ext.items, self.limits)
        except ValidationError as exc:
            attempt.problem = validation_problem(exc)
            return attempt, []
        attempt.notes.extend(valid.dropped)
        return attempt, list(valid.items)


def make_generator(name: str, cfg: BankGenerationConfig, cache_dir: str | Path) -> BankGenerator:
    """Check the prompt class, then build the backend (may load a model) and the generator."""
    from autograde.grading.registry import make_backend

    prompt = resolve_generation_prompt(name, cfg)
    backend = make_backend(cfg.backend, cfg.model, cfg.options, owner=f"bank {name}")
    return BankGenerator(name, cfg, backend, cache_dir, prompt=prompt)


def results_to_bank(results: list[QueryResult], kind: str, info: dict[str, Any], test_collection: str) -> Bank:
    """The successful queries as a workbench-format bank (each query line carries ``info`` + its attempts)."""
    bank = Bank()
    for r in results:
        if not r.ok:
            continue
        bank.headers[r.query_id] = {
            "query_id": r.query_id, "test_collection": test_collection, "query_text": r.query_text,
            "info": {**info, "attempts": len(r.attempts), "notes": [n for a in r.attempts for n in a.notes]},
            "items": None,
        }
        bank.items.extend(BankItem(item_id(r.query_id, t), r.query_id, kind, t) for t in r.items)
    return bank
