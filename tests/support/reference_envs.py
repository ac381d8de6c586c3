"""Reference judge tools in their own environments, called in a subprocess (as tests/support/nuggetizer.py does):

- ``make umbrela-env`` builds ``.venv-umbrela`` with PyPI ``umbrela`` 0.0.7 (``--no-deps``: its prompt file and its
  answer parser, ``umbrela.utils.common_utils``, need only the standard library);
- ``make autojudge-env`` builds ``.venv-autojudge`` with PyPI ``autojudge-evaluate`` 1.1.0 (its package imports
  NLTK's stopwords at import time; the target writes an empty stopword list and an empty punkt folder, since NLTK's
  downloads are out of reach and nothing the tests call uses them).

- ``make autojudge-base-env`` builds ``.venv-autojudge-base`` with PyPI ``autojudge-base`` 1.0.0 (the track's runner
  ``auto-judge``, ``auto-judge-report``, its report, leaderboard, qrels and nugget types) and ``autojudge-annotate``
  0.3.7, beside autograde itself (editable): the environment the track's runner loads autograde's judge in.

Where an environment is absent the tests that need it skip with the fix; on CI (``$CI`` set) they fail instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.helpers import REPO

UMBRELA_VENV = REPO / ".venv-umbrela"
AUTOJUDGE_VENV = REPO / ".venv-autojudge"
AUTOJUDGE_VERSION = "1.1.0"
AUTOJUDGE_BASE_VENV = REPO / ".venv-autojudge-base"
AUTOJUDGE_BASE_VERSION = "1.0.0"
AUTOJUDGE_ANNOTATE_VERSION = "0.3.7"


def _python(venv: Path, target: str) -> str:
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / ".installed").exists()):
        why = f"{python} is missing (fix: make {target})"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the reference parity tests, but: {why}")
        pytest.skip(f"reference environment missing: {why}")
    return str(python)


def reference_tool(venv: Path, target: str, tool: str) -> str:
    """The console script ``tool`` of a reference environment (skips, or fails on CI, where it is absent)."""
    return str(Path(_python(venv, target)).parent / tool)


def run_tool(venv: Path, target: str, tool: str, args: list[str], cwd: Path | None = None,
             env: dict[str, str] | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a reference environment's console script; its output is kept for the test's messages."""
    full = {**os.environ, "PYTHONPATH": "", **(env or {})}
    return subprocess.run([reference_tool(venv, target, tool), *args], capture_output=True, text=True, cwd=cwd,
                          env=full, timeout=timeout)


def run_reference(venv: Path, target: str, script: str, payload: Any) -> Any:
    """Run ``script`` in the reference environment with ``payload`` as JSON on stdin; its stdout as JSON."""
    env = {**os.environ, "NLTK_DATA": str(venv / "nltk_data"), "PYTHONPATH": ""}
    run = subprocess.run([_python(venv, target), "-c", script], input=json.dumps(payload), capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


UMBRELA_SCRIPT = """
import json, sys
from importlib.metadata import version
from importlib.resources import files
from umbrela.utils import common_utils
job = json.load(sys.stdin)
text = files("umbrela").joinpath("prompts/qrel_fewshot_bing.txt").read_text(encoding="utf-8")
template = "".join(text.splitlines(keepends=True)).strip()   # as umbrela's LLMJudge reads it
prompts = common_utils.generate_prompts([(job["query"], job["passage"])], "", template)
parsed = [common_utils.parse_fewshot_response(a, "p", "q") for a in job["answers"]]
print(json.dumps({"version": version("umbrela"), "file": text, "prompt": prompts[0], "parsed": parsed}))
"""

AUTOJUDGE_SCRIPT = """
import json, sys, tempfile, warnings
from pathlib import Path
from importlib.metadata import version
warnings.simplefilter("ignore")
from autojudge_evaluate.evaluation import LeaderboardEvaluator
job = json.load(sys.stdin)
d = Path(tempfile.mkdtemp())
def write(name, table):
    lines = [f"{run} {topic} {m} {v}" for run, topic, m, v in table]
    (d / name).write_text("\\n".join(lines) + "\\n")
    return d / name
truth = write("truth.txt", job["truth"])
ev = write("eval.txt", job["eval"])
methods = ["kendall", "spearman", "tauap_b"] + [f"kendall@{k}" for k in job["ks"]]
e = LeaderboardEvaluator(truth, correlation_methods=methods, truth_format="ir_measures", eval_format="ir_measures")
out = {f"{a}|{b}": v for (a, b), v in e.evaluate(ev).items()}
print(json.dumps({"version": version("autojudge-evaluate"), "result": out}))
"""
