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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from autograde.config.model import Config, deep_merge, error_lines, format_problems
from autograde.core.errors import ConfigError
from autograde.core.yamlfile import read_yaml, yaml_key_lines

DEFAULT_EXPERIMENT = "config/experiments/example.yaml"
"""The experiment the workflow and the CLI use when none is named (the bundled example)."""
__all__ = ["ConfigSource", "DEFAULT_EXPERIMENT", "EXPERIMENT_ENV", "experiment_path", "load_config", "read_yaml",
           "resolve_workflow_config", "validate_config", "yaml_key_lines"]
EXPERIMENT_ENV = "AUTOGRADE_EXPERIMENT"
"""Environment variable naming the experiment config (``--config experiment=PATH`` takes precedence)."""


@dataclass(frozen=True)
class ConfigSource:
    """Where an experiment config came from, to name the file and line (or the command line) of every problem.

    ``path`` is the YAML file (or a description when there is none); ``overrides`` are the key paths given on
    the command line (``snakemake --config grading='{shards: 8}'``): a problem under one of them is attributed
    to the command line, not to a line of the file.
    """

    path: str
    key_lines: dict[tuple[Any, ...], int] = field(default_factory=dict, compare=False)
    overrides: frozenset[tuple[Any, ...]] = frozenset()

    @classmethod
    def of(cls, source: str | ConfigSource, overrides: dict[str, Any] | None = None) -> ConfigSource:
        """A source for a file path (its key lines read once) or an existing source."""
        if isinstance(source, ConfigSource):
            return source
        lines = yaml_key_lines(source) if Path(source).is_file() else {}
        return cls(source, lines, frozenset(_leaf_paths(overrides or {})))

    def from_command_line(self, key: tuple[Any, ...]) -> bool:
        return any(key[: len(o)] == o or o[: len(key)] == key for o in self.overrides if key)

    def locate(self, key: tuple[Any, ...]) -> tuple[str, int | None]:
        """(file, line) of a key path: its own line, else the nearest enclosing key's; the command line for an
        override."""
        if self.from_command_line(key):
            return "command line (snakemake --config)", None
        for n in range(len(key), 0, -1):
            line = self.key_lines.get(tuple(key[:n]))
            if line is not None:
                return self.path, line
        return self.path, None


def located(source: str | ConfigSource, key: tuple[Any, ...], exc: Exception) -> ConfigError:
    """``exc`` (a problem with the value at ``key``, raised where the file is unknown) as a :class:`ConfigError`
    that names the config file and the key's line: ``file:line: message``."""
    path, line = ConfigSource.of(source).locate(key)
    return ConfigError(f"{path}:{line}: {exc}" if line else f"{path}: {exc}")


def _leaf_paths(d: dict[str, Any], prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out += _leaf_paths(v, (*prefix, k))
        else:
            out.append((*prefix, k))
    return out


def validate_config(raw: Any, source: str | ConfigSource = "config") -> Config:
    """Validate a config mapping and the backend options of every model spec; raise :class:`ConfigError` with all problems.

    When ``source`` names a YAML file, every problem names its line; a key given on the command line is
    attributed to the command line.
    """
    src = ConfigSource.of(source)
    if not isinstance(raw, dict):
        raise ConfigError(f"{src.path}: expected a YAML mapping of config sections (data:, banks:, graders:, ...), "
                          f"got {type(raw).__name__}")
    errors: list[tuple[Any, list[Any], tuple[Any, ...]]] = []  # (model, errors, key prefix)
    config: Config | None = None
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        errors.append((Config, exc.errors(), ()))
    errors += [(model, exc.errors(), prefix) for model, exc, prefix in _options_problems(raw)]
    if config is not None:
        errors += [(Config, [{"loc": key, "msg": msg, "type": "cross_check"}], ()) for key, msg in config.cross_problems()]
    lines: list[str] = []
    cli: list[str] = []
    for model, errs, prefix in errors:
        for err in errs:
            key = (*prefix, *err["loc"])
            if src.from_command_line(key):
                cli += error_lines([err], model, prefix)
            else:
                lines += error_lines([err], model, prefix, src.key_lines)
    if lines or cli or config is None or errors:
        parts = [format_problems(lines, src.path)] if lines else []
        if cli:
            parts.append(format_problems(cli, "command line (snakemake --config)").replace(
                "correct the keys and values above", "correct the --config values above"))
        raise ConfigError("\n".join(parts))
    return config


def raw_model_specs(raw: dict[str, Any]) -> list[tuple[tuple[Any, ...], dict[str, Any], str]]:
    """(key path, raw mapping, default backend) of every model spec in a raw config: graders, generated banks, the
    nugget importance model and whole-answer nugget assessors (the sections that embed
    :class:`autograde.grading.spec.ModelSpec`)."""
    from autograde.config.banks import BankGenerationConfig
    from autograde.config.model import GraderConfig

    out: list[tuple[tuple[Any, ...], dict[str, Any], str]] = []
    graders = raw.get("graders")
    if isinstance(graders, list):
        default = GraderConfig.model_fields["backend"].default
        out += [(("graders", i), g, default) for i, g in enumerate(graders) if isinstance(g, dict)]
    generated = raw.get("bank_generation")
    if isinstance(generated, dict):
        default = BankGenerationConfig.model_fields["backend"].default
        out += [(("bank_generation", n), g, default) for n, g in generated.items() if isinstance(g, dict)]
    nuggets = raw.get("nuggets")
    if isinstance(nuggets, dict):
        if isinstance(nuggets.get("importance"), dict):
            out.append((("nuggets", "importance"), nuggets["importance"], ""))
        if isinstance(nuggets.get("assessors"), list):
            out += [(("nuggets", "assessors", k), a, "") for k, a in enumerate(nuggets["assessors"])
                    if isinstance(a, dict) and a.get("backend")]
    return out


def _options_problems(raw: dict[str, Any]) -> list[tuple[Any, ValidationError, tuple[Any, ...]]]:
    """(options model, its validation error, key prefix) for every model spec whose ``options:`` its backend
    refuses (validated here, when the experiment loads, for every section that runs a model)."""
    from autograde.grading.registry import BACKENDS, options_model

    out: list[tuple[Any, ValidationError, tuple[Any, ...]]] = []
    for path, spec, default in raw_model_specs(raw):
        backend = spec.get("backend", default)
        options = spec.get("options") or {}
        if backend not in BACKENDS or not isinstance(options, dict):
            continue
        model = options_model(backend)
        try:
            model.model_validate(options)
        except ValidationError as exc:
            out.append((model, exc, (*path, "options")))
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


COMPLETE_SECTIONS = ("data", "banks", "graders")
"""The sections an experiment given whole (``--configfile``) is expected to have; ``data:`` is required."""


def resolve_workflow_config(given: dict[str, Any], configfiles: Sequence[str | Path] = (),
                            command_line: dict[str, Any] | None = None) -> tuple[dict[str, Any], ConfigSource]:
    """The complete experiment config of a Snakemake run, and where it came from.

    ``given`` is Snakemake's ``config`` (already the merge of ``configfiles`` and the ``--config`` values
    ``command_line``). A ``--configfile`` must be a complete experiment: it is used as it is, never merged over
    the bundled example (one without ``data:`` is refused, naming the sections it lacks). Otherwise the
    experiment file (``--config experiment=PATH``, ``$AUTOGRADE_EXPERIMENT`` or the example) is read and the
    other ``--config`` keys are merged over it as overrides (``--config grading='{shards: 8}'``); problems in
    those are attributed to the command line.
    """
    given = dict(given)
    cli = {k: v for k, v in (command_line if command_line is not None else given).items() if k != "experiment"}
    if configfiles:
        files = [str(p) for p in configfiles]
        whole: dict[str, Any] = {}
        key_lines: dict[tuple[Any, ...], int] = {}
        for f in files:
            content = read_yaml(f) or {}
            if not isinstance(content, dict):
                raise ConfigError(f"{f}: expected a YAML mapping of config sections (data:, banks:, graders:, ...), "
                                  f"got {type(content).__name__}")
            whole = deep_merge(whole, content)
            key_lines.update(yaml_key_lines(f))
        if "data" not in whole:
            lacks = [k for k in COMPLETE_SECTIONS if k not in whole]
            raise ConfigError(
                f"{', '.join(files)}: not a complete experiment: it lacks {', '.join(k + ':' for k in lacks)} "
                f"(it has: {', '.join(k + ':' for k in whole) or 'nothing'}). A --configfile is used as it is, never "
                "merged over another experiment (fix: give a complete config - copy config/experiments/example.yaml, "
                "edit it and run it with --config experiment=PATH - or change single keys of the experiment with "
                "--config KEY=VALUE)")
        given.pop("experiment", None)
        where = files[0] if len(files) == 1 else " + ".join(files)
        return given, ConfigSource(where, key_lines, frozenset(_leaf_paths(cli)))
    if "data" in given:  # a complete config handed over through the API or --config
        given.pop("experiment", None)
        return given, ConfigSource("the config given to snakemake")
    path = experiment_path(given)
    given.pop("experiment", None)
    raw = read_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a YAML mapping of config sections, got {type(raw).__name__}")
    return (deep_merge(raw, given) if given else raw), ConfigSource(path, yaml_key_lines(path),
                                                                    frozenset(_leaf_paths(given)))
