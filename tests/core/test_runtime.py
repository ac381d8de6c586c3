"""Thread control (autograde.core.runtime.set_threads): the job's count reaches torch without importing it."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _python(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "AUTOGRADE_THREADS": ""})
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.strip()


def test_set_threads_does_not_import_torch_and_torch_follows_it() -> None:
    """Every rule script calls set_threads: importing torch there cost 2.5 s of CPU per job (the example, 3x)."""
    pytest.importorskip("torch")
    out = _python("import sys; from autograde.core.runtime import set_threads; print(set_threads(1)); "
                  "print('torch' in sys.modules); import torch; print(torch.get_num_threads())")
    assert out.splitlines() == ["1", "False", "1"]


def test_set_threads_changes_a_loaded_torch() -> None:
    pytest.importorskip("torch")
    out = _python("import torch; torch.set_num_threads(2); from autograde.core.runtime import set_threads; "
                  "set_threads(1); print(torch.get_num_threads())")
    assert out == "1"


def test_set_threads_without_a_count_changes_nothing() -> None:
    out = _python("import os; from autograde.core.runtime import set_threads; print(set_threads(None)); "
                  "print(os.environ.get('OMP_NUM_THREADS'))")
    assert out.splitlines() == ["None", "None"]
