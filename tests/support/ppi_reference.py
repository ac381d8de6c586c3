"""The reference prediction-powered inference (PyPI ``ppi-python``, module ``ppi_py``) in its own environment,
called in a subprocess through :func:`support.reference_envs.run_reference` (as the judge audit's references are).

``make ppi-env`` builds ``.venv-ppi`` with the pinned ``ppi-python`` and its dependencies (numba, statsmodels,
scikit-learn: they clash with nothing here only because they are kept apart; ``make test`` builds it first).
Nothing of it is imported into the test environment: the tests send the cases as JSON to a subprocess that runs
``ppi_mean_pointestimate`` and ``ppi_mean_ci`` and prints their results. Where the environment is absent the
parity tests skip with the fix; on CI (``$CI`` set) they fail instead.
"""

from __future__ import annotations

from typing import Any

from support.helpers import REPO
from support.reference_envs import run_reference

PPI_VENV = REPO / ".venv-ppi"
PPI_VERSION = "0.2.3"
"""The pinned reference version (the Makefile installs exactly this one)."""

_MEAN = """
import json, sys
from importlib.metadata import version
import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
out = []
for c in json.load(sys.stdin):
    y, yhat, unl = (np.asarray(c[k], dtype=float) for k in ("y", "yhat", "yhat_unlabeled"))
    est = ppi_mean_pointestimate(y, yhat, unl, lam=c["lam"])
    lo, hi = ppi_mean_ci(y, yhat, unl, alpha=c["alpha"], lam=c["lam"])
    out.append([float(np.ravel(est)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])])
print(json.dumps({"version": version("ppi-python"), "results": out}))
"""


def reference_means(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """``{version, results}``: ppi_py's (estimate, low, high) of every case (y, yhat, yhat_unlabeled, lam, alpha)."""
    out: dict[str, Any] = run_reference(PPI_VENV, "ppi-env", _MEAN, cases)
    return out
