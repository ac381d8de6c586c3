"""Run mypy over the package and fail only on errors that are not in the baseline (``tools/mypy-baseline.txt``).

The baseline lists known errors as ``file: message [code]`` (no line numbers, so unrelated edits do not break it).
``--update`` rewrites it from the current run (do that only when errors were FIXED, and say so in the commit).
A baseline entry that no longer occurs is reported, so the list only shrinks.

Usage: python tools/mypy_baseline.py [--update]
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy-baseline.txt"


def current_errors() -> Counter[str]:
    res = subprocess.run([sys.executable, "-m", "mypy", "src/autograde"], cwd=ROOT, capture_output=True, text=True)
    out: Counter[str] = Counter()
    for line in res.stdout.splitlines():
        m = re.match(r"^(.+?):\d+: error: (.*)$", line)
        if m:
            out[f"{m.group(1)}: {m.group(2)}"] += 1
    if res.returncode not in (0, 1) or (res.returncode == 1 and not out):
        sys.exit(f"mypy failed to run:\n{res.stdout}{res.stderr}")
    return out


def main() -> int:
    errors = current_errors()
    if "--update" in sys.argv:
        BASELINE.write_text("".join(f"{e}\n" for e in sorted(errors.elements())), encoding="utf-8")
        print(f"mypy baseline: {sum(errors.values())} known error(s) written to {BASELINE.relative_to(ROOT)}")
        return 0
    known = Counter(BASELINE.read_text(encoding="utf-8").splitlines()) if BASELINE.exists() else Counter()
    new = errors - known
    gone = known - errors
    if gone:
        print(f"mypy: {sum(gone.values())} baseline error(s) fixed; shrink the baseline with "
              "python tools/mypy_baseline.py --update")
    if new:
        print(f"mypy: {sum(new.values())} new error(s) (not in {BASELINE.relative_to(ROOT)}):")
        for e in sorted(new.elements()):
            print(f"  {e}")
        return 1
    print(f"mypy: no new errors ({sum(errors.values())} known in the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
