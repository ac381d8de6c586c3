"""Input path patterns: globs in ``data.runs``, ``data.answers`` and ``data.corpus``.

>>> is_glob("runs/*.run"), is_glob("runs/a.run")
(True, False)
"""

from __future__ import annotations

import glob
import re


def is_glob(pattern: str) -> bool:
    """Whether a path pattern has glob characters."""
    return re.search(r"[*?\[]", pattern) is not None


def expand_globs(patterns: list[str]) -> list[str]:
    """Expand glob patterns, relative or absolute (sorted); a literal path is kept even if missing (reported later)."""
    out: list[str] = []
    for pat in patterns:
        if is_glob(pat):
            out.extend(sorted(glob.glob(pat, recursive=True)))
        else:
            out.append(pat)
    return out
