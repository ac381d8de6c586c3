r"""The one YAML reader: strict (UTF-8, duplicate keys are errors naming file and line), and the line of every key.

Every YAML file autograde reads (experiment configs, custom prompts, rubrics, paper values) goes through
:func:`read_yaml`, so a duplicate key or a syntax error is reported the same way everywhere.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "x.yaml")
>>> _ = open(p, "w").write("a: 1\nb:\n  c: 2\n")
>>> read_yaml(p), yaml_key_lines(p)[("b", "c")]
({'a': 1, 'b': {'c': 2}}, 3)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from autograde.core.errors import ConfigError

__all__ = ["read_yaml", "yaml_key_lines"]


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a mapping key given twice (YAML would silently keep the last one)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise ConfigError(f"line {line}: key {key!r} given twice (the first, line {seen[key]}, would be silently "
                              "replaced) (fix: keep one)")
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: str | Path, what: str = "config") -> Any:
    """Parse a YAML file strictly (UTF-8, a BOM is dropped, duplicate keys are errors naming file and line).

    ``what`` names the file in messages (``config``, ``custom prompts``, ``rubric``). Raises :class:`ConfigError`.
    """
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: {what} file not found (fix: check the path)") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: is a folder, not a {what} file (fix: name the YAML file)") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not valid UTF-8 at byte {exc.start} (fix: save the file as UTF-8)") from None
    text = text.removeprefix("\ufeff")
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{p}{where}: not valid YAML: {problem} (fix: check indentation, colons and quotes)") from None


def yaml_key_lines(path: str | Path) -> dict[tuple[Any, ...], int]:
    """Line number (1-based) of every key path in a YAML file (``("graders", 0, "options")`` -> 42); {} if unreadable."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8").removeprefix("\ufeff"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    out: dict[tuple[Any, ...], int] = {}

    def walk(n: Any, prefix: tuple[Any, ...]) -> None:
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = (*prefix, k.value)
                out[key] = k.start_mark.line + 1
                walk(v, key)
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                out[(*prefix, i)] = v.start_mark.line + 1
                walk(v, (*prefix, i))

    walk(node, ())
    return out
