"""A workflow run as a person wants to watch it: one short line per finished job, the full Snakemake log in a file,
and at the end what was made and where the results are.

``make example`` runs the bundled example through it::

    python -m autograde.workflow.progress --log logs/example.log -- snakemake -c2

prints ``[ 3/65]  12s  grade  grader=minilm-questions scatteritem=1-of-4`` as each job finishes, and on failure
the failing job's block and the end of its log file. Its exit status is Snakemake's.

>>> follow = Follower()
>>> lines = ["[Sun Nov 29 04:39:27 2026]", "localrule ingest:", "    jobid: 2", "    wildcards: grader=a",
...          "Finished jobid: 2 (Rule: ingest)", "1 of 65 steps (2%) done"]
>>> [x for line in lines if (x := follow.feed(line, 0.0))]
['[ 1/65]    0s  ingest  grader=a']
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Follower", "main"]

_RULE = re.compile(r"^(?:local)?(?:checkpoint|rule) (\S+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\S+)\)$")
_STEPS = re.compile(r"^(\d+) of (\d+) steps \(\d+%\) done$")
_ERROR = re.compile(r"^Error in rule (\S+):$")


@dataclass
class Follower:
    """Reads Snakemake's output line by line and says, per finished job, one short line."""

    wildcards: dict[str, str] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    _rule: str | None = None
    _current: str | None = None
    _finished: tuple[str, str] | None = None
    error: list[str] = field(default_factory=list)
    _in_error: bool = False

    def feed(self, line: str, elapsed: float) -> str | None:
        """The progress line for ``line`` (None for every line that is not the end of a job)."""
        line = line.rstrip("\n")
        if m := _RULE.match(line):
            self._rule = m.group(1)
        elif (m := _JOBID.match(line)) and self._rule is not None:
            self.rules[m.group(1)] = self._rule
            self._current = m.group(1)
        elif (m := _WILDCARDS.match(line)) and self._current is not None:
            self.wildcards[self._current] = m.group(1).replace(", ", " ")
        elif m := _FINISHED.match(line):
            self._finished = (m.group(1), m.group(2))
        elif (m := _STEPS.match(line)) and self._finished is not None:
            job, rule = self._finished
            self._finished = None
            if rule == "all":
                return None
            done, total = m.group(1), m.group(2)
            extra = self.wildcards.get(job, "")
            return f"[{done.rjust(len(total))}/{total}] {elapsed:4.0f}s  {rule}" + (f"  {extra}" if extra else "")
        if _ERROR.match(line):
            self._in_error = True
        if self._in_error:
            self.error.append(line)
            if not line.strip():
                self._in_error = False
        return None


def _log_tail(block: list[str], lines: int = 15) -> list[str]:
    """The last lines of the log file a failing job's block names."""
    for line in block:
        m = re.match(r"^\s+log: (\S+)", line)
        if m and Path(m.group(1)).is_file():
            text = Path(m.group(1)).read_text(encoding="utf-8", errors="replace").splitlines()
            return [f"--- the end of {m.group(1)}:", *text[-lines:]]
    return []


def run(command: list[str], log: Path) -> int:
    """Run ``command`` (a Snakemake call), print a line per finished job, keep everything in ``log``; returns its
    exit status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    follow = Follower()
    tail: deque[str] = deque(maxlen=40)
    t0 = time.perf_counter()
    started = False
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            tail.append(line.rstrip("\n"))
            if not started and line.startswith("Building DAG of jobs"):
                started = True
                print(f"running: {' '.join(command)} (full log: {log})", flush=True)
            shown = follow.feed(line, time.perf_counter() - t0)
            if shown:
                print(shown, flush=True)
        rc = proc.wait()
    seconds = time.perf_counter() - t0
    text = list(tail)
    if rc == 0:
        nothing = any("Nothing to be done" in x for x in text)
        print(f"done in {seconds:.0f} s" + (" (nothing to be done: every result is current)" if nothing else ""))
    else:
        print(f"failed after {seconds:.0f} s (exit status {rc}); the full log is {log}", file=sys.stderr)
        block = follow.error or [x for x in text if x.strip()][-20:]
        print("\n".join(block + _log_tail(follow.error)), file=sys.stderr)
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a workflow command with one line per finished job and the "
                                     "full log in a file.")
    parser.add_argument("--log", default="logs/snakemake.log", help="file of the full log (default: %(default)s)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command after --, e.g. -- snakemake -c2")
    args = parser.parse_args(argv)
    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    return run(command, Path(args.log))


if __name__ == "__main__":
    sys.exit(main())
