"""The reference table of every config key, generated from the config models (README.md embeds it).

``python -m autograde.config.reference`` prints the Markdown table; ``--write README.md`` replaces the part of
README.md between the ``<!-- config-keys:start -->`` and ``<!-- config-keys:end -->`` markers, and a test
checks that README.md is up to date, so the documentation cannot drift from the code.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

START = "<!-- config-keys:start -->"
END = "<!-- config-keys:end -->"


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args)
    if origin in (list, tuple):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_type_name(args[1])}" if len(args) == 2 else "mapping"
    if ann is type(None):
        return "null"
    if isinstance(ann, type):
        return ann.__name__ if not issubclass(ann, BaseModel) else "section"
    return str(ann).replace("typing.", "")


def _default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        value = field.default
    elif field.default_factory is not None:
        try:
            value = field.default_factory()
        except TypeError:
            return "(computed)"
    else:
        return "required"
    if isinstance(value, BaseModel):
        return "(section)"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    if isinstance(value, bool):
        return str(value).lower()
    return f"`{value}`".replace("|", "\\|")


def _section_model(ann: Any) -> tuple[type[BaseModel] | None, str]:
    """The section model inside an annotation and the key suffix it lives under (``[]`` for lists, ``.<name>``)."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann, ""
    if origin in (list, tuple) and args:
        inner, suffix = _section_model(args[0])
        return inner, "[]" + suffix
    if origin is dict and len(args) == 2:
        inner, suffix = _section_model(args[1])
        return inner, ".<name>" + suffix
    if origin in (typing.Union, types.UnionType):
        for a in args:
            inner, suffix = _section_model(a)
            if inner is not None:
                return inner, suffix
    return None, ""


def rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    """(key path, type, default, description) of every field, depth first."""
    out = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        inner, suffix = _section_model(field.annotation)
        desc = " ".join((field.description or "").split()).replace("|", "\\|")
        if inner is not None and suffix == "" and not typing.get_args(field.annotation):
            out.append((key, "section", "", desc))
            out.extend(rows(inner, key + "."))
            continue
        if inner is not None:
            out.append((key, _type_name(field.annotation), _default(field), desc))
            out.extend(rows(inner, key + suffix + "."))
            continue
        out.append((key, _type_name(field.annotation), _default(field), desc))
    return out


def backend_rows() -> list[tuple[str, str, str, str]]:
    """The ``options:`` of every grader backend."""
    from autograde.grading.registry import BACKENDS, options_model

    out: list[tuple[str, str, str, str]] = []
    for backend in sorted(BACKENDS):
        out.extend((f"graders[].options.{k} ({backend})", t, d, s)
                   for k, t, d, s in rows(options_model(backend)))
    return out


def reference_markdown() -> str:
    from autograde.config.model import Config

    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, typ, default, desc in rows(Config) + backend_rows():
        lines.append(f"| `{key}` | {typ} | {default} | {desc} |")
    return "\n".join(lines) + "\n"


def replace_between_markers(text: str, table: str, start: str = START, end: str = END) -> str:
    """``text`` with the part between the ``start`` and ``end`` marker lines replaced by ``table``."""
    if start not in text or end not in text:
        raise ValueError(f"markers {start} ... {end} not found")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", metavar="README.md", help="replace the table between the markers in this file")
    args = parser.parse_args(argv)
    table = reference_markdown()
    if args.write:
        p = Path(args.write)
        p.write_text(replace_between_markers(p.read_text(encoding="utf-8"), table), encoding="utf-8")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
