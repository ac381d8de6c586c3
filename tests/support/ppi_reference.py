"""The reference prediction-powered inference (PyPI ``ppi-python``, module ``ppi_py``) in its own environment,
called in a subprocess.

``make ppi-env`` builds ``.venv-ppi`` with the pinned ``ppi-python`` and its dependencies (numba, statsmodels,
scikit-learn: they clash with nothing here only because they are kept apart; ``make test`` builds it first).
Nothing of it is imported into the test environment: the tests send the cases as JSON to a subprocess that runs
``ppi_mean_pointestimate`` and ``ppi_mean_ci`` and prints their results. Where the environment is absent the
parity tests skip with the fix; on CI (``$CI`` set) they fail instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.helpers import REPO

PPI_VENV = REPO / ".venv-ppi"
PPI_VERSION = "0.2.3"
"""The pinned reference version (the Makefile installs exactly this one)."""

_MEAN = """
import json, sys
from importlib.metadata import version
import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
out = []
for c in json.load(open(sys.argv[1], encoding="utf-8")):
    y, yhat, unl = (np.asarray(c[k], dtype=float) for k in ("y", "yhat", "yhat_unlabeled"))
    est = ppi_mean_pointestimate(y, yhat, unl, lam=c["lam"])
    lo, hi = ppi_mean_ci(y, yhat, unl, alpha=c["alpha"], lam=c["lam"])
    out.append([float(np.ravel(est)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])])
print(json.dumps({"version": version("ppi-python"), "results": out}))
"""


def ppi_python() -> str:
    """The Python of the reference environment; skips the calling test (fails on CI) where there is none."""
    given = os.environ.get("AUTOGRADE_PPI_PYTHON")
    python = Path(given) if given else PPI_VENV / "bin" / "python"
    ready = python.exists() and (given or (PPI_VENV / ".installed").exists())
    if not ready:
        why = f"{python} is missing (fix: make ppi-env)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the prediction-powered inference parity tests, but: {why}")
        pytest.skip(f"reference ppi_py environment missing: {why}")
    return str(python)


def reference_means(cases: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """``{version, results}``: ppi_py's (estimate, low, high) of every case (y, yhat, yhat_unlabeled, lam, alpha)."""
    path = tmp / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    run = subprocess.run([ppi_python(), "-c", _MEAN, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]
