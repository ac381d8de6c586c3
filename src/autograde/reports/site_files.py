"""Putting a freshly built site in place: only the files whose bytes changed are written, so an unchanged page keeps
its file (and its modification time), and files no longer made are removed."""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

__all__ = ["update_folder"]


def update_folder(new: Path, out: Path) -> int:
    """Make ``out`` hold exactly the files of ``new``, writing only files whose bytes differ; returns how many."""
    written = 0
    if out.exists() and not out.is_dir():
        out.unlink()
    out.mkdir(parents=True, exist_ok=True)
    fresh = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    for rel in sorted(fresh):
        dst = out / rel
        if dst.is_file() and filecmp.cmp(new / rel, dst, shallow=False):
            continue
        if dst.is_dir():
            shutil.rmtree(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(new / rel, dst)
        written += 1
    for p in sorted(out.rglob("*"), reverse=True):  # deepest first: files no longer made, then empty folders
        rel = p.relative_to(out)
        if (p.is_file() or p.is_symlink()) and rel not in fresh:
            p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
    return written
