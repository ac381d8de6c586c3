"""Loading an experiment: the config file, read strictly and validated once, every problem with its path.

An experiment config is complete and independent: nothing is inherited from another file. The workflow reads
the file named by ``snakemake --config experiment=PATH`` (or ``$AUTOGRADE_EXPERIMENT``; default
:data:`DEFAULT_EXPERIMENT`), or takes the whole config given with ``--configfile``; the CLI reads ``--config``.

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "c.yaml")
>>> _ = open(p, "w").write("data: {queries: q.tsv}\\ndata: {queries: r.tsv}\\n")
>>> try:
...     load_config(p)
... except ConfigError as e:
...     print(str(e).splitlines()[-1].split(": ", 1)[1])
line 2: key 'data' given twice (the first, line 1, would be silently replaced) (fix: keep one)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from autograde.config import Config, deep_merge, error_lines, format_problems
from autograde.errors import ConfigError
from autograde.io.yamlfile import read_yaml, yaml_key_lines

DEFAULT_EXPERIMENT = "config/experiments/example.yaml"
"""The experiment the workflow and the CLI use when none is named (the bundled example)."""
__all__ = ["DEFAULT_EXPERIMENT", "EXPERIMENT_ENV", "experiment_path", "load_config", "read_yaml",
           "resolve_workflow_config", "validate_config", "yaml_key_lines"]
EXPERIMENT_ENV = "AUTOGRADE_EXPERIMENT"
"""Environment variable naming the experiment config (``--config experiment=PATH`` takes precedence)."""


def validate_config(raw: Any, source: str = "config") -> Config:
    """Validate a config mapping and every grader's backend options; raise :class:`ConfigError` with all problems.

    When ``source`` is a YAML file, every problem names its line.
    """
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a YAML mapping of config sections (data:, banks:, graders:, ...), "
                          f"got {type(raw).__name__}")
    lines: list[str] = []
    config: Config | None = None
    key_lines: dict[tuple[Any, ...], int] | None = None
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        key_lines = yaml_key_lines(source) if Path(source).is_file() else {}
        lines.extend(error_lines(exc, key_lines=key_lines))
    options = _options_problems(raw)
    if options and key_lines is None:
        key_lines = yaml_key_lines(source) if Path(source).is_file() else {}
    lines.extend(x for errs in options for x in error_lines(errs[1], errs[0], errs[2], key_lines))
    if lines or config is None:
        raise ConfigError(format_problems(lines, source))
    return config


def _options_problems(raw: dict[str, Any]) -> list[tuple[Any, ValidationError, tuple[Any, ...]]]:
    """(options model, its validation error, key prefix) for every grader whose ``options:`` its backend refuses."""
    from autograde.grading.registry import BACKENDS, options_model

    graders = raw.get("graders")
    if not isinstance(graders, list):
        return []
    out: list[tuple[Any, ValidationError, tuple[Any, ...]]] = []
    for i, g in enumerate(graders):
        if not isinstance(g, dict):
            continue
        backend = g.get("backend", "embedded")
        options = g.get("options") or {}
        if backend not in BACKENDS or not isinstance(options, dict):
            continue
        model = options_model(backend)
        try:
            model.model_validate(options)
        except ValidationError as exc:
            out.append((model, exc, ("graders", i, "options")))
    return out


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> Config:
    """Read the experiment config at ``path``, apply ``overrides`` (deep merge), validate."""
    raw = read_yaml(path) or {}
    if overrides and isinstance(raw, dict):
        raw = deep_merge(raw, overrides)
    return validate_config(raw, str(path))


def experiment_path(given: dict[str, Any]) -> str:
    """The experiment file the workflow reads: ``--config experiment=``, ``$AUTOGRADE_EXPERIMENT``, or the default."""
    return str(given.get("experiment") or os.environ.get(EXPERIMENT_ENV) or DEFAULT_EXPERIMENT)


def resolve_workflow_config(given: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The complete experiment config of a Snakemake run, and where it came from.

    ``given`` is Snakemake's ``config``. A complete config (one with ``data:``, from ``--configfile``) is used
    as it is. Otherwise the experiment file is read and the other ``--config`` keys are merged over it as
    overrides (``--config grading='{shards: 8}'``). Nothing is ever inherited from another experiment.
    """
    given = dict(given)
    if "data" in given:
        given.pop("experiment", None)
        return given, "the --configfile given to snakemake"
    path = experiment_path(given)
    given.pop("experiment", None)
    raw = read_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a YAML mapping of config sections, got {type(raw).__name__}")
    return (deep_merge(raw, given) if given else raw), path
