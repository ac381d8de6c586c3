"""Checks of the experiment config that need more than its types: the prompt registry, grade ranges, models on
disk or in the Hugging Face cache, settings a backend does not use, globs. Each problem names the config file
and the line of the key it is about (or the command line, for a ``--config`` override) and the fix.

Input files (queries, runs, banks, corpus) are checked by :mod:`autograde.checks`, which runs these first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from autograde.config import expand_globs, is_glob
from autograde.errors import AutogradeError, Problems
from autograde.log import logger

if TYPE_CHECKING:
    from autograde.config import Config, GraderConfig
    from autograde.experiment import ConfigSource
    from autograde.grading.prompts import PromptClass

EMBEDDED_GRADES = (0, 5)
"""Grade range of the embedded similarity grader."""
GRADE_SCALE = (0, 5)
"""Grades a prompt's labels may map to: the scale of qrels labels and cover thresholds (0 = not relevant)."""
UNUSED_BY_EMBEDDED = {"model": "the embedded grader always uses its bundled all-MiniLM-L6-v2",
                      "scoring": "the embedded grader scores by cosine similarity",
                      "prompt_order": "the embedded grader sends no prompt"}
"""Grader keys the embedded backend does not use: giving one is an error (it would be silently ignored)."""


def _prompt(name: str | None) -> PromptClass | None:
    from autograde.grading.prompts import get_prompt

    try:
        return get_prompt(name or "")
    except AutogradeError:
        return None


def grade_range(grader: GraderConfig) -> tuple[int, int] | None:
    """(lowest, highest) grade a grader gives; None when its prompt cannot be resolved (reported elsewhere)."""
    if grader.backend == "embedded":
        return EMBEDDED_GRADES
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
            if g.backend != "embedded":
                problems.add(*src.locate(("graders", i)), f"graders[{i}] ({g.name}) needs prompt_class",
                             "pick one from 'autograde prompts'")
            continue
        try:
            prompt = get_prompt(g.prompt_class)
        except AutogradeError as exc:
            problems.add(*at, f"graders[{i}].prompt_class: {exc}",
                         "pick one from 'autograde prompts', or define it in options.custom_prompts")
            continue
        if g.backend == "embedded":
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


def check_unused_settings(config: Config, src: ConfigSource, problems: Problems) -> None:
    """A grader setting its backend does not use is an error (it would be silently ignored)."""
    for i, g in enumerate(config.graders):
        if g.backend != "embedded":
            continue
        for key, why in UNUSED_BY_EMBEDDED.items():
            if key in g.model_fields_set:
                problems.add(*src.locate(("graders", i, key)), f"graders[{i}] ({g.name}): {key}: is not used by "
                             f"backend embedded ({why})", f"remove {key}:, or pick a backend that uses it (hf, vllm, "
                             "openai)")


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


def check_globs(config: Config, src: ConfigSource, problems: Problems) -> None:
    """A glob in data.runs / data.answers / data.corpus that matches no file is an error (a typo would drop
    systems or passages)."""
    for key in ("runs", "answers", "corpus"):
        for j, pat in enumerate(getattr(config.data, key)):
            if is_glob(pat) and not expand_globs([pat]):
                problems.add(*src.locate(("data", key, j)), f"data.{key}: the pattern {pat!r} matches no file "
                             f"(working directory {os.getcwd()})", "fix the pattern or the working directory")


def hf_cache_state(model: str, revision: str | None = None) -> str:
    """``local`` (a folder or file), ``cached`` (in the local Hugging Face cache) or ``absent``."""
    if Path(model).expanduser().exists():
        return "local"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return "absent"
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        found = try_to_load_from_cache(model, name, revision=revision)
        if isinstance(found, str):
            return "cached"
    return "absent"


def check_models(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Local model paths of hf/vllm graders exist; a hub id is in the local Hugging Face cache, or the run may
    download it (then a warning says so)."""
    cache = Path(config.grading.cache_dir)
    if cache.exists() and not cache.is_dir():
        problems.add(*src.locate(("grading", "cache_dir")), f"grading.cache_dir {str(cache)!r} is a file, not a folder",
                     "name a folder (it is created)")
    for i, g in enumerate(config.graders):
        if g.backend not in ("hf", "vllm") or not g.model:
            continue
        at = src.locate(("graders", i, "model"))
        model = g.model
        looks_local = model.startswith((".", "/", "~")) or model.endswith(".gguf") or model.count("/") != 1
        if looks_local and not Path(model).expanduser().exists():
            problems.add(*at, f"graders[{i}].model: {model!r} does not exist",
                         "give an existing model folder or .gguf file, or a hub id (org/name) in the local HF cache")
            continue
        gguf = g.options.get("gguf_file")
        if gguf and Path(model).is_dir() and not (Path(model) / str(gguf)).is_file():
            found = sorted(p.name for p in Path(model).glob("*.gguf"))
            problems.add(*src.locate(("graders", i, "options", "gguf_file")),
                         f"graders[{i}].options.gguf_file: {gguf!r} is not in {model}",
                         f"name one of: {', '.join(found)}" if found else "put the GGUF file there")
        if looks_local or g.backend != "hf":
            continue
        state = hf_cache_state(model, g.options.get("revision"))
        if state != "absent":
            continue
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or g.options.get("local_files_only", True)
        if offline:
            why = ("options.local_files_only is true" if g.options.get("local_files_only", True)
                   else "HF_HUB_OFFLINE is set")
            problems.add(*at, f"graders[{i}] ({g.name}): model {model!r} is neither a local folder nor in the local "
                         f"Hugging Face cache, and the grade jobs never download it ({why})",
                         f"download it first (huggingface-cli download {model}) or give the path of a local copy; or "
                         "set options.local_files_only: false to let the first grade job download it")
        else:
            logger.warning("%s:%s: graders[%d] (%s): model %r is not in the local Hugging Face cache; the first "
                           "grade job downloads it into %s (on nodes without internet, run huggingface-cli "
                           "download %s first)", at[0], at[1] or "?", i, g.name, model, _hf_home(), model)


def _hf_home() -> str:
    return os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")


def check_config(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Every check of this module."""
    check_models(config, src, problems)
    check_globs(config, src, problems)
    check_custom_prompts(config, src, problems)
    check_grader_prompts(config, src, problems)
    check_unused_settings(config, src, problems)
    check_thresholds(config, src, problems)

