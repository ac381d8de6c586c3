"""The reference nugget scorer (PyPI ``nuggetizer``, castorini) in its own environment, called in a subprocess.

``make nuggetizer-env`` builds ``.venv-nuggetizer`` with the pinned ``nuggetizer`` (``--no-deps``: its scoring module
``nuggetizer.core.metrics`` imports only the standard library; ``make test`` builds it first). Nothing of it is
vendored or imported into the test environment: the tests send an assignment file to a subprocess that runs the
package's own ``calculate_nugget_scores`` / ``calculate_global_metrics`` and writes what its
``scripts/calculate_metrics.py`` writes. Where the environment is absent the parity tests skip with the fix; on CI
(``$CI`` set) they fail instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.helpers import REPO

NUGGETIZER_VENV = REPO / ".venv-nuggetizer"
NUGGETIZER_VERSION = "0.0.5"
"""The pinned reference version (the Makefile installs exactly this one)."""

_SCORE = """
import json, sys
from importlib.metadata import version
from nuggetizer.core.metrics import calculate_nugget_scores, calculate_global_metrics
records = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
out = []
for r in records:
    m = calculate_nugget_scores(r["qid"], r["nuggets"])
    out.append({"qid": m.qid, "strict_vital_score": m.strict_vital_score, "strict_all_score": m.strict_all_score,
                "vital_score": m.vital_score, "all_score": m.all_score})
out.append(calculate_global_metrics(records))
print(json.dumps({"version": version("nuggetizer"), "lines": out}))
"""


def nuggetizer_python() -> str:
    """The Python of the reference scorer's environment; skips the calling test (fails on CI) where there is none."""
    given = os.environ.get("AUTOGRADE_NUGGETIZER_PYTHON")
    python = Path(given) if given else NUGGETIZER_VENV / "bin" / "python"
    ready = python.exists() and (given or (NUGGETIZER_VENV / ".installed").exists())
    if not ready:
        why = f"{python} is missing (fix: make nuggetizer-env)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the nugget parity tests, but: {why}")
        pytest.skip(f"reference nugget scorer environment missing: {why}")
    return str(python)


def reference_scores(assignments: Path) -> dict[str, Any]:
    """``{version, lines}``: the reference scorer's per-answer lines and its ``all`` line for an assignment file."""
    run = subprocess.run([nuggetizer_python(), "-c", _SCORE, str(assignments)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]
