"""The Jinja2 environment of the reports (templates are package data under ``templates/``)."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

TEMPLATES = Path(__file__).resolve().parent / "templates"


def fmt(x: Any, digits: int = 4) -> str:
    """A value for a table cell: None/NA/NaN as a dash, floats with ``digits`` decimals, bools as yes/no."""
    if x is None or x is pd.NA:
        return "–"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, float | np.floating):
        return "–" if math.isnan(x) else f"{float(x):.{digits}f}"
    if isinstance(x, np.integer):
        return str(int(x))
    return str(x)


def rank(x: Any) -> str:
    """A rank: ``1``, ``2.5`` for the average rank of ties (never ``1.0``); a dash where there is none."""
    if x is None or x is pd.NA or (isinstance(x, float | np.floating) and math.isnan(x)):
        return "–"
    return f"{float(x):g}"


def json_script(data: Any) -> Markup:
    """JSON safe to embed in ``<script type="application/json">`` (no ``</script>`` can close it)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


@cache
def environment() -> Environment:
    """One environment: HTML and SVG autoescaped, undefined names are errors."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "svg"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["fmt"] = fmt
    env.filters["rank"] = rank
    env.filters["json_script"] = json_script
    return env


def render_page(template: str, **context: Any) -> str:
    """Render one template with ``context``."""
    return environment().get_template(template).render(**context)
