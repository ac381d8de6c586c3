"""The manifest of the reference data (``manifest.yaml`` beside this module): each file's target path under the
data folder, its public source, size and sha256.

``python -m autograde.refdata.manifest --write docs/data.md`` replaces the table of docs/data.md between its
``<!-- data-files:start -->`` and ``<!-- data-files:end -->`` markers (a test keeps it current).

>>> m = load_manifest()
>>> m.file("dl20/dl20-queries.json").size, m.folder
(2600, '../shared/data')
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path, PurePosixPath

from pydantic import Field, ValidationError, field_validator, model_validator

from autograde.config.reference import replace_between_markers
from autograde.core.errors import ConfigError, UnknownNameError
from autograde.core.schema import Strict
from autograde.core.yamlfile import read_yaml

__all__ = ["DATA_END", "DATA_START", "MANIFEST_FILE", "Extract", "LinesOf", "Manifest", "RefFile", "load_manifest", "manifest_markdown"]

MANIFEST_FILE = Path(__file__).with_name("manifest.yaml")
"""The manifest shipped with the package."""
DATA_START = "<!-- data-files:start -->"
DATA_END = "<!-- data-files:end -->"
_SHA256 = re.compile(r"[0-9a-f]{64}")




class Extract(Strict):
    """The file is the part of the downloaded text from just after ``start`` through ``end`` (both found once)."""

    start: str = Field(description="the text just before the file's first character")
    end: str = Field(description="the file's last characters (the first occurrence after start)")


class LinesOf(Strict):
    """The file is the lines of another file of the manifest that start with ``prefix``, in order."""

    file: str = Field(description="path of the other file (under the data folder)")
    prefix: str = Field(description="the lines kept start with this")


class RefFile(Strict):
    """One reference file: where it goes, what it is, where it comes from, and its size and sha256."""

    path: str = Field(description="target path under the data folder (the path the experiments read)")
    what: str = Field(description="what the file holds")
    size: int | None = Field(description="size in bytes (null: not pinned)", ge=0)
    sha256: str | None = Field(description="sha256 of the file (null: not pinned; fetched only on request)")
    url: str | None = Field(description="the public URL, at a pinned commit where possible (null: no public file)")
    mirrors: list[str] = Field(default_factory=list, description="other URLs of the same file, tried in order")
    extract: Extract | None = Field(default=None, description="the file is a part of the downloaded text")
    lines_of: LinesOf | None = Field(default=None, description="the file is derived from another file's lines")
    source: str = Field(description="where the file comes from, for a person (and how it was made)")
    licence: str = Field(default="", description="the licence or terms of the source, where known")

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        p = PurePosixPath(v)
        if p.is_absolute() or ".." in p.parts or not p.parts or "\\" in v:
            raise ValueError(f"{v!r} must be a relative path with '/' inside the data folder")
        return v

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str | None) -> str | None:
        if v is not None and not _SHA256.fullmatch(v):
            raise ValueError("must be 64 lowercase hex digits")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> RefFile:
        if (self.sha256 is None) != (self.size is None):
            raise ValueError("give both size and sha256, or neither (an unpinned file)")
        if self.extract is not None and self.url is None:
            raise ValueError("extract needs a url to extract from")
        if self.lines_of is not None and (self.url is not None or self.sha256 is None):
            raise ValueError("lines_of is derived here: no url, and a pinned sha256")
        if self.mirrors and self.url is None:
            raise ValueError("mirrors need a url")
        return self

    @property
    def pinned(self) -> bool:
        return self.sha256 is not None


class Manifest(Strict):
    """Every reference file, and the folder they go into by default."""

    folder: str = Field(description="the data folder, relative to the repository root (what the configs name)")
    files: list[RefFile] = Field(description="the files, in the order they are fetched")

    @model_validator(mode="after")
    def _unique(self) -> Manifest:
        seen: set[str] = set()
        for f in self.files:
            if f.path in seen:
                raise ValueError(f"{f.path} is listed twice")
            if f.lines_of is not None and f.lines_of.file not in seen:
                raise ValueError(f"{f.path}: lines_of.file {f.lines_of.file!r} must be listed before it")
            seen.add(f.path)
        return self

    def file(self, path: str) -> RefFile:
        for f in self.files:
            if f.path == path:
                return f
        raise UnknownNameError(f"{path!r} is not in the reference data manifest (it lists "
                               f"{', '.join(f.path for f in self.files[:5])}, ...)")


def load_manifest(path: str | Path = MANIFEST_FILE) -> Manifest:
    """Read and validate a manifest; problems are :class:`ConfigError` naming the file and the entry."""
    data = read_yaml(path, "reference data manifest")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        lines = []
        for e in exc.errors():
            loc = list(e["loc"])
            if len(loc) >= 2 and loc[0] == "files" and isinstance(loc[1], int) and isinstance(data, dict):
                files = data.get("files") or []
                if loc[1] < len(files) and isinstance(files[loc[1]], dict):
                    loc[1] = f"[{files[loc[1]].get('path', loc[1])}]"
            lines.append(f"  - {'.'.join(str(x) for x in loc)}: {e['msg']}")
        raise ConfigError(f"{path}: invalid reference data manifest:\n" + "\n".join(lines)) from None


def _how(f: RefFile) -> str:
    if f.lines_of is not None:
        return f"derived: lines of `{f.lines_of.file}` starting with `{f.lines_of.prefix.strip()}`"
    if f.url is None:
        return "**no public file**: " + f.source
    pin = "" if f.pinned else " (checksum not pinned: `--allow-unpinned`)"
    part = " (a part of it: `extract`)" if f.extract is not None else ""
    return f"[{f.source}]({f.url}){part}{pin}"


def manifest_markdown(manifest: Manifest | None = None) -> str:
    """The table of docs/data.md: every file, its size and where it comes from."""
    m = manifest or load_manifest()
    lines = ["| file | what | bytes | from |", "|---|---|---|---|"]
    for f in m.files:
        size = f"{f.size:,}" if f.size is not None else "?"
        lines.append(f"| `{f.path}` | {f.what} | {size} | {_how(f)} |".replace("\n", " "))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the reference data table, or write it into a Markdown file.")
    ap.add_argument("--write", metavar="FILE", help="replace the table between the markers of FILE (docs/data.md)")
    args = ap.parse_args(argv)
    table = manifest_markdown()
    if args.write:
        p = Path(args.write)
        p.write_text(replace_between_markers(p.read_text(encoding="utf-8"), table, DATA_START, DATA_END),
                     encoding="utf-8")
        print(f"wrote {p}")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
