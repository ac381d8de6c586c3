"""The human-sample walkthrough of docs/human_sample.md (the block README.md carries too) runs as written on a fresh
copy of the repository's tracked files: a draw before the workflow stops with the command to run first, every line
then succeeds, `sample estimate` prints the leaderboards, and no tracked file changes (`git status` is clean)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import REPO, workflow_env

BLOCK = re.compile(r"<!-- walkthrough -->\n```bash\n(.*?)```", re.S)
GIT = ["git", "-c", "user.email=test@example.org", "-c", "user.name=test"]


def walkthrough() -> list[str]:
    """The walkthrough's command lines (comments dropped)."""
    text = (REPO / "docs" / "human_sample.md").read_text(encoding="utf-8")
    block = BLOCK.search(text)
    assert block, "docs/human_sample.md has no <!-- walkthrough --> bash block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def _argv(line: str) -> list[str]:
    """The line's command with this environment's executables (the commands a user's `make install` puts on PATH)."""
    words = shlex.split(line)
    bin_dir = Path(sys.executable).parent
    tools = {"autograde": str(bin_dir / "autograde"), "snakemake": str(bin_dir / "snakemake")}
    return [tools.get(words[0], words[0]), *words[1:]]


def _fresh_copy(dst: Path) -> Path:
    """The repository's tracked files as they are now, in a new git repository (one commit)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src = REPO / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    subprocess.run([*GIT, "init", "-q"], cwd=dst, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=dst, check=True)
    subprocess.run([*GIT, "commit", "-qm", "fresh"], cwd=dst, check=True)
    return dst


@pytest.mark.workflow
def test_the_walkthrough_runs_on_a_fresh_copy_and_changes_no_tracked_file(tmp_path: Path) -> None:
    lines = walkthrough()
    assert lines[0].startswith("snakemake ") and any(" sample estimate " in f" {x} " for x in lines)
    repo = _fresh_copy(tmp_path / "repo")
    env = workflow_env()
    draw = next(x for x in lines if " sample draw " in f" {x} ")
    early = subprocess.run(_argv(draw), cwd=repo, capture_output=True, text=True, env=env, timeout=600)
    assert early.returncode != 0 and "Traceback" not in early.stderr
    assert "does not exist yet" in early.stderr and lines[0].split("  #")[0].split(" --config ")[1] in early.stderr
    out = ""
    for line in lines:
        run = subprocess.run(_argv(line), cwd=repo, capture_output=True, text=True, env=env, timeout=1800)
        assert run.returncode == 0, f"{line}\n{(run.stdout + run.stderr)[-3000:]}"
        out = run.stdout
    assert "rank  group  system" in out and "95% interval" in out  # the last line prints the leaderboards
    assert (repo / "results" / "example-sample" / "human_sample" / "draw" / "design.tsv").is_file()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == "", status.stdout
