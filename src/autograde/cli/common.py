"""What every command group shares: the experiment argument, config sections read from a YAML file, overrides.

One reading of each thing: the experiment a command works on is ``--config`` when given, else
``$AUTOGRADE_EXPERIMENT``, else the bundled example (:func:`autograde.config.experiment.experiment_path`, the same rule
the workflow follows); a section of a config file (``metrics:``, ``rubric:``, ``calibrated_qrels:``) is read by
:func:`autograde.config.experiment.read_yaml` (duplicate keys are errors with their line) and validated by its model
with every problem named by key and line; command-line overrides are validated the same way and attributed to
the command line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from autograde.core.errors import ConfigError
from autograde.core.layout import Layout
from autograde.core.log import logger

if TYPE_CHECKING:
    from autograde.config.model import Config

M = TypeVar("M", bound=BaseModel)

DEFAULT_LAYOUT = Layout()
"""The default results folder's layout (what the commands' path options default to)."""
EXPERIMENT_HELP = ("experiment config (default: $AUTOGRADE_EXPERIMENT if set, else "
                   "config/experiments/example.yaml)")


def add_config_option(p: argparse.ArgumentParser, section: str | None = None) -> None:
    """``--config``: the experiment config file, the ONE meaning of the option in every command.

    A command that reads the whole experiment (``section`` None) defaults to ``$AUTOGRADE_EXPERIMENT``, else the
    bundled example (:func:`experiment_file`); a command that takes only the defaults of one ``section`` of it
    (``metrics:``, ``rubric:``, ``calibrated_qrels:``) defaults to ``$AUTOGRADE_EXPERIMENT``, else the section's
    built-in defaults (:func:`section_file`). Both are resolved when the command runs, so the variable counts.
    """
    if section is None:
        p.add_argument("--config", default=None, metavar="YAML", help=EXPERIMENT_HELP)
    else:
        p.add_argument("--config", default=None, metavar="YAML",
                       help=f"experiment config whose '{section}:' section gives the defaults (default: "
                            f"$AUTOGRADE_EXPERIMENT if set, else the built-in defaults)")


def add_threads_option(p: argparse.ArgumentParser, default: int | None = None,
                       what: str = "CPU threads for the model") -> None:
    """``--threads``: the thread count of torch, OpenMP and BLAS (set through :func:`autograde.core.runtime.set_threads`)."""
    p.add_argument("--threads", type=int, default=default,
                   help=f"{what} (default: {default if default is not None else 'all cores'})")


def add_shard_options(p: argparse.ArgumentParser, made: str | None = "graded") -> None:
    """``--shard`` and ``--digest``: the shard a workflow job runs, and what it is made for (checked at its merge;
    ``made`` None: a job whose merge checks no digest, no ``--digest``)."""
    p.add_argument("--shard", default="", help="the shard ('2-of-4', as the workflow's jobs); default: every query")
    if made is not None:
        p.add_argument("--digest", default=None,
                       help=f"what the shard is {made} for (workflow jobs; checked at the merge)")


def section_file(args: argparse.Namespace) -> str | None:
    """The config file a section-reading command takes its defaults from: ``--config``, else
    ``$AUTOGRADE_EXPERIMENT``, else None (the section's built-in defaults)."""
    from autograde.config.experiment import EXPERIMENT_ENV

    return getattr(args, "config", None) or os.environ.get(EXPERIMENT_ENV) or None


def experiment_file(args: argparse.Namespace) -> str:
    """The experiment file of a command: ``--config``, else ``$AUTOGRADE_EXPERIMENT``, else the bundled example."""
    from autograde.config.experiment import experiment_path

    return str(getattr(args, "config", None) or experiment_path({}))


def load_experiment(args: argparse.Namespace, resolve: bool = True) -> Config:
    """The validated experiment config of a command (see :func:`experiment_file`).

    ``resolve``: the queries and qrels of ``data.dataset`` are fetched (once) and named as files
    (:func:`autograde.io.irds.resolve_dataset`); ``validate`` resolves them itself, without downloading.
    """
    from autograde.config.experiment import load_config

    path = experiment_file(args)
    if getattr(args, "config", None) is None:
        logger.debug("experiment: %s", path)
    config = load_config(path)
    if resolve and config.data.dataset:
        from autograde.workflow.checks import resolve_dataset_at

        config = resolve_dataset_at(config, path)
    return config


def read_section(path: str | None, key: str) -> dict[str, Any]:
    """The raw ``key:`` mapping of a YAML config file ({} without a file or without that section)."""
    if not path:
        return {}
    from autograde.core.yamlfile import read_yaml

    raw = read_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a YAML mapping of config sections, got {type(raw).__name__} "
                          f"(fix: see config/experiments/example.yaml)")
    section = raw.get(key) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: '{key}:' must be a mapping of settings, got {type(section).__name__} "
                          f"(fix: see the '{key}:' section of docs/config.md)")
    return dict(section)


def validate_section(model: type[M], raw: dict[str, Any], source: str | None, key: str,
                     from_command_line: set[str] | None = None) -> M:
    """``raw`` validated by ``model``; every problem named as ``key.field`` with its file line, or as the command
    line's when the value came from an option (``from_command_line`` holds those field names)."""
    from autograde.config.model import error_lines, format_problems
    from autograde.core.yamlfile import yaml_key_lines

    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        cli = from_command_line or set()
        in_file = [e for e in exc.errors() if not e["loc"] or str(e["loc"][0]) not in cli]
        on_cli = [e for e in exc.errors() if e["loc"] and str(e["loc"][0]) in cli]
        lines: list[str] = []
        if in_file:
            key_lines = yaml_key_lines(source) if source else {}
            lines += error_lines(in_file, model, prefix=(key,), key_lines=key_lines)
        if on_cli:
            lines += [f"command line: {line}" for line in error_lines(on_cli, model)]
        raise ConfigError(format_problems(lines, source or "command line")) from None


def section_config(model: type[M], path: str | None, key: str, **overrides: Any) -> M:
    """The ``key:`` section of ``path`` (or the model's defaults) with the command-line ``overrides`` that are
    not None applied, validated once."""
    raw = read_section(path, key)
    given = {k: v for k, v in overrides.items() if v is not None}
    return validate_section(model, {**raw, **given}, path, key, set(given))


def override(section: M, **values: Any) -> M:
    """A validated copy of a config section with the options given on the command line (None = not given)."""
    given = {k: v for k, v in values.items() if v is not None}
    if not given:
        return section
    return validate_section(type(section), {**section.model_dump(), **given}, None, "option", set(given))


def write_text_outputs(out: str | None, text: str, quiet: bool = False) -> None:
    """Write ``text`` to ``out`` (atomically) when given, and print it unless ``quiet``."""
    from autograde.core.text import atomic_write_text

    if out:
        atomic_write_text(out, text)
        logger.info("wrote %s", out)
    if not quiet:
        sys.stdout.write(text)


def add_command(sub: Any, name: str, help_: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` opens with a description (its one-line help as a sentence by default)."""
    text = description or (help_[:1].upper() + help_[1:] + ("" if help_.endswith(".") else "."))
    return sub.add_parser(name, help=help_, description=text)
