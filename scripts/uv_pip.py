"""Install packages into a virtual environment with uv, reading the package sources from pip's configuration.

    python scripts/uv_pip.py UV VENV_PYTHON [pip install arguments ...]

The Makefile's environments install with uv (about 9x faster than pip for PyTorch here: 7 s against 60 s, and a
second environment hard-links the same files from uv's cache). uv reads no pip configuration, so the sources and
limits a machine gives pip (``pip config list``, ``PIP_*`` variables: find-links, index-url, extra-index-url,
constraint, cert) are passed on as uv's options; with ``--index-strategy unsafe-best-match`` uv picks a version
across every index as pip does. Like pip (and unlike uv's default) it compiles the installed modules' bytecode: every
workflow job and test subprocess is a fresh interpreter, and where Python may not write bytecode
(``PYTHONDONTWRITEBYTECODE``, as on CI) an environment without it compiles torch, pandas and transformers from source
at every start (``import pandas``: 2.6 s of CPU against 0.8 s; CI's workflow tests ran 2.3x slower). Without uv
(``UV`` not executable) it runs ``VENV_PYTHON -m pip install`` instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

MULTI = ("find-links", "extra-index-url", "constraint")
"""pip options that take a whitespace-separated list in pip's configuration."""
SINGLE = ("index-url", "cert")


def pip_settings(python: str) -> dict[str, list[str]]:
    """pip's effective settings for the options uv needs: the configuration files' values, then the ``PIP_*``
    variables (pip lets a variable override a file)."""
    out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False).stdout
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name in MULTI + SINGLE:
            found[name] = shlex.split(value.strip().strip("'\""))
    for name in MULTI + SINGLE:
        env = os.environ.get("PIP_" + name.upper().replace("-", "_"))
        if env:
            found[name] = env.split()
    return found


def uv_command(uv: str, python: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The ``uv pip install`` command line and environment equivalent to ``python -m pip install *args`` here."""
    settings = pip_settings(python)
    cmd = [uv, "pip", "install", "--python", python, "--index-strategy", "unsafe-best-match"]
    if "--no-compile" in args:  # pip's spelling; uv does not compile unless asked
        args = [a for a in args if a != "--no-compile"]
    else:
        cmd.append("--compile-bytecode")
    for value in settings.get("index-url", [])[:1]:
        cmd += ["--index-url", value]
    for name in MULTI:
        for value in settings.get(name, []):
            cmd += [f"--{name}", value]
    env = dict(os.environ)
    for cert in settings.get("cert", [])[:1]:
        env.setdefault("SSL_CERT_FILE", cert)
    return cmd + args, env


def main(argv: list[str]) -> int:
    uv, python, *args = argv
    if not os.access(uv, os.X_OK):
        return subprocess.run([python, "-m", "pip", "install", *args], check=False).returncode
    cmd, env = uv_command(uv, python, args)
    return subprocess.run(cmd, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
