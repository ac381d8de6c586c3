"""Checks of the experiment config that need more than its types: the prompt registry, grade ranges, models on
disk or in the Hugging Face cache, settings a backend does not use, globs. Each problem names the config file
and the line of the key it is about (or the command line, for a ``--config`` override) and the fix.

Input files (queries, runs, banks, corpus) are checked by :mod:`autograde.workflow.checks`, which runs these first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from autograde.core.errors import AutogradeError, Problems
from autograde.core.log import logger
from autograde.core.paths import expand_globs, is_glob
from autograde.grading.registry import backend, options_model

if TYPE_CHECKING:
    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config, GraderConfig
    from autograde.grading.prompts import PromptClass
    from autograde.grading.spec import ModelSpec

GRADE_SCALE = (0, 5)
"""Grades a prompt's labels may map to: the scale of qrels labels and cover thresholds (0 = not relevant)."""


def _prompt(name: str | None) -> PromptClass | None:
    from autograde.grading.prompts import get_prompt

    try:
        return get_prompt(name or "")
    except AutogradeError:
        return None


def grade_range(grader: GraderConfig) -> tuple[int, int] | None:
    """(lowest, highest) grade a grader gives; None when its prompt cannot be resolved (reported elsewhere)."""
    fixed = backend(grader.backend).grade_range
    if fixed is not None:
        return fixed
    prompt = _prompt(grader.prompt_class)
    if prompt is None:
        return None
    if not prompt.labels:
        return (0, 1)  # extraction prompts: answered or not
    return min(prompt.labels.values()), max(prompt.labels.values())


def check_custom_prompts(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Custom prompt files load, and their labels map to grades on the grade scale."""
    from autograde.grading.prompts import load_custom_prompts

    lo, hi = GRADE_SCALE
    for g in config.graders:
        custom = g.options.get("custom_prompts")
        if not custom:
            continue
        try:
            prompts = load_custom_prompts(custom)
        except AutogradeError as exc:
            problems.add(custom, None, f"custom prompts of grader {g.name!r}: {exc}",
                         "see 'autograde prompts --help' for the custom prompt format")
            continue
        for p in prompts:
            off = {label: grade for label, grade in (p.labels or {}).items() if not lo <= grade <= hi}
            if off and p.kind != "generation":
                problems.add(custom, None, f"custom prompt {p.config_name} (grader {g.name!r}): labels "
                             f"{', '.join(f'{k!r} -> {v}' for k, v in off.items())} map outside the grade scale "
                             f"{lo}..{hi}; grades become qrels labels and cover thresholds",
                             f"map every label to a grade in {lo}..{hi} (0 = not relevant)")


def check_grader_prompts(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Every grader names a registered prompt class that fits its bank, scoring and prompt order."""
    from autograde.grading.prompts import get_prompt

    for i, g in enumerate(config.graders):
        at = src.locate(("graders", i, "prompt_class"))
        if not g.prompt_class:
            if backend(g.backend).language_model:
                problems.add(*src.locate(("graders", i)), f"graders[{i}] ({g.name}) needs prompt_class",
                             "pick one from 'autograde prompts'")
            continue
        try:
            prompt = get_prompt(g.prompt_class)
        except AutogradeError as exc:
            problems.add(*at, f"graders[{i}].prompt_class: {exc}",
                         "pick one from 'autograde prompts', or define it in options.custom_prompts")
            continue
        if not backend(g.backend).language_model:
            if prompt.kind not in ("rating", "extraction") or (g.bank != "direct") != (prompt.item_kind != "query"):
                problems.add(*at, f"graders[{i}] ({g.name}): the embedded grader records prompt_class "
                             f"{prompt.config_name} ({prompt.kind}, {prompt.item_kind}) for a bank of "
                             f"{'queries' if g.bank == 'direct' else 'test items'}",
                             "name the rating prompt whose grades it stands in for "
                             "(QuestionSelfRatedUnanswerablePromptWithChoices or NuggetSelfRatedPrompt), or leave it out")
            continue
        if g.scoring == "logits" and not prompt.scorable_by_logits:
            problems.add(*src.locate(("graders", i, "scoring")), f"graders[{i}] ({g.name}): {prompt.config_name} "
                         "is an extraction prompt", "set scoring: generate")
        if g.scoring == "logits" and prompt.answer_prefix:
            cannot = _cannot_continue(g)
            if cannot:
                problems.add(*src.locate(("graders", i, "scoring")), f"graders[{i}] ({g.name}): logits scoring of "
                             f"{prompt.config_name} reads the label after {prompt.answer_prefix.strip()!r} appended "
                             f"to the prompt, which {cannot} cannot continue (the grade job would refuse it)",
                             "set scoring: generate (the answer's final score is parsed), or grade with a model that "
                             "continues the prompt (backend hf with a causal model, or vllm)")
        if g.prompt_order == "passage_first" and prompt.passage_first_template is None:
            problems.add(*src.locate(("graders", i, "prompt_order")), f"graders[{i}] ({g.name}): "
                         f"{prompt.config_name} has no passage_first variant", "use prompt_order: question_first")
        wants = "query" if g.bank == "direct" else None
        if wants and prompt.item_kind != "query":
            problems.add(*at, f"graders[{i}] ({g.name}): bank 'direct' grades against the query, but "
                         f"{prompt.config_name} grades {prompt.item_kind}s", "use a direct prompt (FagB, Sun, ...) "
                         "or a bank of questions/nuggets")
        if not wants and prompt.item_kind == "query":
            problems.add(*at, f"graders[{i}] ({g.name}): {prompt.config_name} is a direct prompt "
                         "(graded against the query)", "set bank: direct")


def _cannot_continue(g: GraderConfig) -> str | None:
    """What cannot continue text appended to ``g``'s prompt (a chat API, a seq2seq model), or None: the backend's
    capability (:attr:`autograde.grading.registry.Backend.continues_prompt`) and, where it depends on the model,
    the model's ``config.json`` when it is on disk (a local folder, or the Hugging Face cache)."""
    capability = backend(g.backend).continues_prompt
    if capability is False:
        return f"backend {g.backend} (a chat API that answers in a new turn)"
    if capability is None and _is_encoder_decoder(g):
        return f"the seq2seq model {g.model} (its decoder starts from its start token, not from the prompt)"
    return None


def _is_encoder_decoder(spec: GraderConfig) -> bool:
    """Whether the model's ``config.json`` (a local folder's, or in the Hugging Face cache) says encoder-decoder;
    False where it cannot be read here (a GGUF file, a model not downloaded: the grade job checks it)."""
    import json

    model = spec.model or ""
    path = Path(model).expanduser()
    found: str | None = None
    if path.is_dir():
        found = str(path / "config.json") if (path / "config.json").is_file() else None
    elif is_hub_id(model):
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return False
        hit = try_to_load_from_cache(model, "config.json", revision=spec.options.get("revision"))
        found = hit if isinstance(hit, str) else None
    if found is None:
        return False
    try:
        return bool(json.loads(Path(found).read_text(encoding="utf-8")).get("is_encoder_decoder", False))
    except (OSError, ValueError, AttributeError):
        return False


def check_thresholds(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Qrels and cover thresholds lie within the grade range of every grader that uses them."""
    for i, g in enumerate(config.graders):
        rng = grade_range(g)
        if rng is None:
            continue
        lo, hi = rng
        own = g.thresholds is not None
        cover_key = ("cover", "thresholds") if config.cover.thresholds is not None else None
        qrels_key = ("graders", i, "thresholds") if own else ("qrels", "thresholds")
        checks = [("qrels thresholds", config.thresholds_of(g.name), qrels_key)]
        if cover_key is not None:
            checks.append(("cover thresholds", config.cover_thresholds_of(g.name), cover_key))
        elif config.cover.enabled:
            checks[0] = ("qrels (and cover) thresholds", checks[0][1], qrels_key)
        for what, values, key in checks:
            bad = [t for t in values if not lo < t <= hi]
            if not bad:
                continue
            name = ".".join(str(k) if not isinstance(k, int) else f"[{k}]" for k in key).replace(".[", "[")
            fix = (f"use thresholds in {lo + 1}..{hi} in {name}" if own or key[0] == "cover" else
                   f"use thresholds in {lo + 1}..{hi} in qrels.thresholds, or give this grader its own: "
                   f"graders[{i}].thresholds: [{hi}]")
            problems.add(*src.locate(key), f"{what} {bad} of grader {g.name!r} ({name}) are outside its grade "
                         f"range {lo}..{hi} (every passage would get the same label)", fix)


def configured_files(config: Config) -> list[tuple[tuple[Any, ...], str]]:
    """(key path, file) of every input file the config names literally (globs are :func:`check_globs`'): queries,
    runs, answers, corpus, qrels, official leaderboard, generation data, banks read as they are."""
    from autograde.config.banks import banks_read_at_parse_time

    d = config.data
    out: list[tuple[tuple[Any, ...], str]] = [(("data", k), str(getattr(d, k))) for k in
                                               ("queries", "qrels", "official_leaderboard", "generation")
                                               if getattr(d, k) and not (k in ("queries", "qrels") and d.dataset)]
    out += [(("data", k, j), p) for k in ("runs", "answers", "corpus") for j, p in enumerate(getattr(d, k))
            if not is_glob(p)]
    out += [(("banks", name), path) for name, path in banks_read_at_parse_time(config).items()]
    return out


def check_files_exist(config: Config, src: ConfigSource, problems: Problems) -> set[str]:
    """Every input file the config names exists: a missing one is named with the config key and its line.
    Returns the missing paths (their readers' own "not found" is then left out)."""
    from autograde.core.layout import made_by

    missing: set[str] = set()
    for key, path in configured_files(config):
        if not Path(path).exists():
            name = ".".join(str(k) if not isinstance(k, int) else f"[{k}]" for k in key).replace(".[", "[")
            problems.add(*src.locate(key), f"{name}: {path!r} does not exist (working directory {os.getcwd()})",
                         made_by(path) or "correct the path in the config (a relative path starts at the working "
                         "directory)")
            missing.add(path)
    return missing


def check_globs(config: Config, src: ConfigSource, problems: Problems) -> None:
    """A glob in data.runs / data.answers / data.corpus that matches no file is an error (a typo would drop
    systems or passages)."""
    from autograde.core.layout import made_by

    for key in ("runs", "answers", "corpus"):
        for j, pat in enumerate(getattr(config.data, key)):
            if is_glob(pat) and not expand_globs([pat]):
                problems.add(*src.locate(("data", key, j)), f"data.{key}: the pattern {pat!r} matches no file "
                             f"(working directory {os.getcwd()})",
                             made_by(pat.split("*", 1)[0]) or "fix the pattern or the working directory")


HUB_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
"""A Hugging Face hub id: ``name`` (legacy canonical models such as ``gpt2``) or ``org/name``."""
ModelRole = Literal["grader", "generation", "importance", "assessor"]


@dataclass(frozen=True)
class ModelVerdict:
    """What is known of a model spec's model before any job: ``ok``, ``warn`` (the run may still work: a download)
    or ``fail``, with a message and the fix. ``validate`` and ``doctor`` both report it, so they agree."""

    status: Literal["ok", "warn", "fail"]
    message: str
    fix: str = ""


def is_hub_id(model: str) -> bool:
    """Whether ``model`` names a Hugging Face hub model rather than a local path: not path-like (no leading
    ``.``, ``/`` or ``~``, no ``.gguf``, at most one ``/``), not an existing path, and of the hub's form."""
    if model.startswith((".", "/", "~")) or model.endswith(".gguf") or model.count("/") > 1:
        return False
    return not Path(model).expanduser().exists() and HUB_ID_RE.fullmatch(model) is not None


def _offline(spec: ModelSpec) -> tuple[bool, str]:
    """(a job never downloads this model, why)."""
    if "local_files_only" in options_model(str(spec.backend)).model_fields and spec.options.get("local_files_only", True):
        return True, "options.local_files_only is true"
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        return True, "HF_HUB_OFFLINE is set"
    return False, ""


def _hub_verdict(spec: ModelSpec, owner: str, repo_id: str, filename: str) -> ModelVerdict:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return ModelVerdict("warn", f"{repo_id}: cannot check the Hugging Face cache (huggingface_hub missing)")
    revision = spec.options.get("revision")
    found = try_to_load_from_cache(repo_id, filename, revision=revision)
    if isinstance(found, str):
        return ModelVerdict("ok", f"{repo_id} is in the local Hugging Face cache ({Path(found).parent})")
    fix = (f"download it where there is internet: huggingface-cli download {repo_id}"
           + (f" {filename}" if filename != "config.json" else "") + (f" --revision {revision}" if revision else "")
           + " (the cache is HF_HOME, shared with the compute nodes), or give model: a local folder or .gguf file")
    offline, why = _offline(spec)
    if offline:
        return ModelVerdict("fail", f"{owner}.model: {repo_id!r} is neither a local folder nor in the local Hugging "
                            f"Face cache, and the jobs never download it ({why})",
                            fix + ("; or set options.local_files_only: false to let the first job download it"
                                   if "local_files_only" in why else ""))
    return ModelVerdict("warn", f"{owner}.model: {repo_id!r} is not in the local Hugging Face cache; the first job "
                        f"downloads it into {_hf_home()} (compute nodes often have no internet)", fix)


def dotted(path: tuple[Any, ...]) -> str:
    """A key path as written in messages: ``("graders", 0, "model")`` -> ``graders[0].model``."""
    return ".".join(str(k) if not isinstance(k, int) else f"[{k}]" for k in path).replace(".[", "[")


def model_verdict(spec: ModelSpec, owner: str) -> ModelVerdict | None:
    """The one predicate on a model spec's ``model:``: a local folder or GGUF file exists, or a hub id is in the
    local Hugging Face cache (else a download, or a failure when the jobs never download). None for backends
    that load no model files (embedded, openai). ``owner`` is the spec's key path (``graders[0]``)."""
    if spec.backend is None or not backend(spec.backend).local_model:
        return None
    model = spec.model or ""
    if not model:
        return ModelVerdict("fail", f"{owner}.model: none given (backend {spec.backend} loads a model)",
                            "set model: a hub id, a local folder or a .gguf file")
    gguf = spec.options.get("gguf_file")
    if is_hub_id(model):
        return _hub_verdict(spec, owner, model, str(gguf) if gguf else "config.json")
    path = Path(model).expanduser()
    if gguf and path.is_dir():
        f = path / str(gguf)
        if f.is_file():
            return ModelVerdict("ok", f"GGUF file {f} ({f.stat().st_size / 1e6:.0f} MB)")
        have = sorted(p.name for p in path.glob("*.gguf"))[:5]
        return ModelVerdict("fail", f"{owner}.options.gguf_file: {gguf!r} is not in {model}",
                            f"name one of: {', '.join(have)}" if have else "put the GGUF file there")
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
        return ModelVerdict("ok", f"model {'file' if path.is_file() else 'folder'} {path}")
    return ModelVerdict("fail", f"{owner}.model: {model!r} does not exist",
                        "give an existing model folder or .gguf file, or a hub id (org/name) in the local Hugging "
                        "Face cache")


def model_specs(config: Config) -> list[tuple[tuple[Any, ...], str, ModelSpec, ModelRole]]:
    """(key path, owner, spec, role) of every model spec of the experiment: graders, generated banks, the nugget
    importance model, whole-answer nugget assessors."""
    out: list[tuple[tuple[Any, ...], str, ModelSpec, ModelRole]] = [
        (("graders", i), f"graders[{i}] ({g.name})", g, "grader") for i, g in enumerate(config.graders)]
    out += [(("bank_generation", n), f"bank_generation.{n}", g, "generation") for n, g in config.bank_generation.items()]
    if config.nuggets is not None:
        if config.nuggets.importance is not None:
            out.append((("nuggets", "importance"), "nuggets.importance", config.nuggets.importance, "importance"))
        out += [(("nuggets", "assessors", k), f"nuggets.assessors[{k}] ({a.name})", a, "assessor")
                for k, a in enumerate(config.nuggets.assessors) if a.mode == "whole_answer"]
    return out


def check_model_spec(path: tuple[Any, ...], owner: str, spec: ModelSpec, src: ConfigSource, problems: Problems) -> None:
    """The one validator of a model spec, wherever it sits in the config (its backend ``options:`` were validated
    when the config loaded): keys its backend does not use are errors (they would be silently ignored), and its
    model must be reachable (:func:`model_verdict`). Each problem names the config line of its key."""
    assert spec.backend is not None
    for key, why in backend(spec.backend).unused_keys.items():
        if key in spec.model_fields_set:
            problems.add(*src.locate((*path, key)), f"{owner}: {key}: is not used by backend {spec.backend} ({why})",
                         f"remove {key}:, or pick a backend that uses it (hf, vllm, openai)")
    verdict = model_verdict(spec, dotted(path))
    if verdict is None or verdict.status == "ok":
        return
    at = src.locate((*path, "options", "gguf_file") if "gguf_file" in verdict.message else (*path, "model"))
    if verdict.status == "fail":
        problems.add(*at, verdict.message, verdict.fix)
    else:
        logger.warning("%s:%s: %s (%s)", at[0], at[1] or "?", verdict.message, verdict.fix)


def check_models(config: Config, src: ConfigSource, problems: Problems) -> None:
    """The grade cache folder is a folder; every model spec passes :func:`check_model_spec`."""
    check_cache_dir(config, src, problems)
    for path, owner, spec, _role in model_specs(config):
        check_model_spec(path, owner, spec, src, problems)


def check_cache_dir(config: Config, src: ConfigSource, problems: Problems) -> None:
    """``grading.cache_dir`` is a folder (or not there yet: it is created)."""
    cache = Path(config.grading.cache_dir)
    if cache.exists() and not cache.is_dir():
        problems.add(*src.locate(("grading", "cache_dir")), f"grading.cache_dir {str(cache)!r} is a file, not a folder",
                     "name a folder (it is created)")


def _hf_home() -> str:
    return os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")


def check_config(config: Config, src: ConfigSource, problems: Problems, models: bool = True) -> None:
    """Every check of this module (``models`` False: not the model specs, for a caller that reports them itself,
    as ``autograde doctor`` does with the same verdict)."""
    if models:
        check_models(config, src, problems)
    else:
        check_cache_dir(config, src, problems)
    check_globs(config, src, problems)
    check_custom_prompts(config, src, problems)
    check_grader_prompts(config, src, problems)
    check_thresholds(config, src, problems)

