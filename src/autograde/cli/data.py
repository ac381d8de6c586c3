"""``autograde data``: the reference data (the DL20 files, the calibration examples' data, the files
``make reproduce`` and the tests read), downloaded from its public sources with sha256 checks.

Examples::

    autograde data fetch                       # into ../shared/data (what the configs read); `make data` runs this
    autograde data fetch --into /data/autograde --only dl20/
    autograde data verify                      # no download: is every file there and the reference one?
    autograde data list                        # every file, its size and where it comes from

Exit status 1 when a file could not be downloaded or is not the reference file; files without a public
source are listed with where they come from (docs/data.md).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

from autograde.cli.common import add_command

if TYPE_CHECKING:
    from autograde.refdata.fetch import Outcome
    from autograde.refdata.manifest import Manifest

__all__ = ["register"]

TAGS = {"present": "[ ok ]", "downloaded": "[ ok ]", "derived": "[ ok ]", "failed": "[fail]", "refused": "[fail]",
        "differs": "[fail]", "missing": "[miss]", "no source": "[skip]", "not pinned": "[skip]"}


def _manifest(args: argparse.Namespace) -> Manifest:
    from autograde.refdata.manifest import MANIFEST_FILE, load_manifest

    return load_manifest(args.manifest or MANIFEST_FILE)


def _report(outcomes: list[Outcome], folder: str) -> int:
    for o in outcomes:
        sys.stdout.write(f"{TAGS[o.status]} {o.path}: {o.detail}\n")
    counts = Counter(o.status for o in outcomes)
    sys.stdout.write(f"data ({folder}): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + "\n")
    skipped = [o for o in outcomes if o.status == "no source" and o.ok]
    if skipped:
        sys.stdout.write(f"{len(skipped)} file(s) have no public download (docs/data.md says where each comes "
                         "from); what reads them says 'input missing' or skips\n")
    return 0 if all(o.ok for o in outcomes) else 1


def cmd_fetch(args: argparse.Namespace) -> int:
    """Download every missing reference file, checking its sha256."""
    from autograde.refdata.fetch import fetch

    manifest = _manifest(args)
    folder = args.into or manifest.folder
    return _report(fetch(manifest, folder, mirror=args.mirror, timeout=args.timeout,
                         allow_unpinned=args.allow_unpinned, only=args.only), folder)


def cmd_verify(args: argparse.Namespace) -> int:
    """Check the files against the manifest, without downloading."""
    from autograde.refdata.fetch import verify

    manifest = _manifest(args)
    folder = args.into or manifest.folder
    return _report(verify(manifest, folder), folder)


def cmd_list(args: argparse.Namespace) -> int:
    """Print the table of every reference file (as in docs/data.md)."""
    from autograde.refdata.manifest import manifest_markdown

    sys.stdout.write(manifest_markdown(_manifest(args)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``data`` with its ``fetch``, ``verify`` and ``list`` subcommands."""
    p = subparsers.add_parser("data", help="download the reference data from its public sources (sha256-checked)",
                              description="The reference data the DL20 experiment, the calibration examples, "
                              "make reproduce and the tests read: download it from its public sources into the "
                              "folder the configs name, with a sha256 check of every file (docs/data.md).")
    sub = p.add_subparsers(dest="data_command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--into", help="the data folder (default: the manifest's, ../shared/data: the paths the "
                       "configs read)")
        q.add_argument("--manifest", help="another manifest YAML (default: the one shipped with autograde)")

    f = add_command(sub, "fetch", "download every missing reference file and check its sha256")
    common(f)
    f.add_argument("--mirror", help="a base URL serving the data folder's layout, used instead of the public "
                   "URLs (<mirror>/<path>)")
    f.add_argument("--only", action="append", help="only files whose path starts with this (repeatable)")
    f.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a server (default: %(default)s)")
    f.add_argument("--allow-unpinned", action="store_true", help="also download files whose checksum the manifest "
                   "does not pin (unchecked; their sha256 is printed)")
    f.set_defaults(func=cmd_fetch)

    v = add_command(sub, "verify", "check the reference files against the manifest (no download)")
    common(v)
    v.set_defaults(func=cmd_verify)

    li = add_command(sub, "list", "print every reference file, its size and its public source")
    li.add_argument("--manifest", help="another manifest YAML (default: the one shipped with autograde)")
    li.set_defaults(func=cmd_list)
