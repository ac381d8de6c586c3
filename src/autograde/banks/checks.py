"""Checks of the ``bank_generation:`` section before any job starts (``autograde validate`` and the DAG build).

Each generated bank names a generation prompt class (custom prompt files load), backend options that its backend
accepts, a local model path that exists (hf, vllm), and, with ``grade_with: edited``, an edited copy that exists.
No grader may use a generation prompt to grade. Problems are collected, each naming the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.errors import AutogradeError, Problems
from autograde.core.log import logger

if TYPE_CHECKING:
    from autograde.config.banks import BankGenerationConfig
    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config


def check_bank_generation(config: Config, queries: dict[str, str] | None, problems: Problems,
                          source: str | ConfigSource = "config") -> None:
    """Add every problem of the ``bank_generation:`` section (and graders using generation prompts) to ``problems``;
    each names the config line of its key."""
    from autograde.config.experiment import ConfigSource

    src = ConfigSource.of(source)
    from autograde.banks.generate import resolve_generation_prompt

    for name, cfg in config.bank_generation.items():
        key = f"bank_generation.{name}"
        prompt = None
        try:
            prompt = resolve_generation_prompt(name, cfg)
        except AutogradeError as exc:
            problems.add(*src.locate(("bank_generation", name, "prompt_class")), str(exc).split(" (fix: ")[0],
                         "pick one from 'autograde prompts --kind generation', or define it in options.custom_prompts")
        _check_edited_copy(config, name, cfg, problems)
        if prompt is not None and queries and {"query_title", "query_subtopic"} & _fields(prompt.template):
            plain = [q for q, t in queries.items() if cfg.subtopic_separator not in t]
            if plain:
                logger.warning("%s: %s asks for {query_title} / {query_subtopic}, but %d of %d queries have no %r "
                               "(e.g. %s); their whole text is used for both", key, prompt.config_name, len(plain),
                               len(queries), cfg.subtopic_separator, plain[0])
    _check_no_generation_prompt_in_graders(config, src, problems)


def _check_edited_copy(config: Config, name: str, cfg: BankGenerationConfig, problems: Problems) -> None:
    """``grade_with: edited`` needs the edited copy of the generated bank."""
    from autograde.config.banks import edited_bank_path, generated_bank_path

    if cfg.grade_with != "edited":
        return
    edited = edited_bank_path(name, cfg)
    if not Path(edited).is_file():
        generated = generated_bank_path(config.results_dir, name)
        problems.add(edited, None, f"the edited copy of generated bank {name!r} does not exist "
                     f"(bank_generation.{name}.grade_with: edited)",
                     f"create it from the generated bank: autograde bank init-edit --config CONFIG --bank {name} "
                     f"(generate {generated} first: grade_with: generated and snakemake, or autograde bank "
                     f"generate --config CONFIG --bank {name})")


def _check_no_generation_prompt_in_graders(config: Config, src: ConfigSource, problems: Problems) -> None:
    """A grader must not use a test-bank generation prompt."""
    from autograde.grading.prompts import get_prompt
    from autograde.grading.registry import backend

    for i, g in enumerate(config.graders):
        if not g.prompt_class or not backend(g.backend).language_model:
            continue
        try:
            p = get_prompt(g.prompt_class)
        except AutogradeError:
            continue  # reported by the grader checks
        if p.kind == "generation":
            problems.add(*src.locate(("graders", i, "prompt_class")),
                         f"graders[{i}] ({g.name}): {p.config_name} is a test-bank generation prompt, "
                         "not a grading prompt", "use it under bank_generation:, and give the grader a grading prompt "
                         "(autograde prompts)")


def _fields(template: str) -> set[str]:
    from autograde.grading.prompts import FIELD_RE

    return set(FIELD_RE.findall(template))
