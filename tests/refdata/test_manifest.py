"""The reference data manifest: valid, its table in docs/data.md current, and its checksums those of the reference
copy in ../shared/data (where present)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.helpers import REPO, SHARED_DATA, has_shared_data

from autograde.core.errors import ConfigError
from autograde.refdata.fetch import verify
from autograde.refdata.manifest import DATA_END, DATA_START, load_manifest, manifest_markdown


def test_docs_data_md_lists_the_manifest() -> None:
    text = (REPO / "docs" / "data.md").read_text(encoding="utf-8")
    current = text.split(DATA_START, 1)[1].split(DATA_END, 1)[0].strip("\n")
    assert current == manifest_markdown().strip("\n"), (
        "docs/data.md is stale: run python -m autograde.refdata.manifest --write docs/data.md")


def test_every_path_a_config_or_plan_reads_from_the_data_folder_is_in_the_manifest() -> None:
    """What the shipped configs and the reproduction plan read from ../shared/data, make data provides (or the
    manifest says why it cannot)."""
    import re

    listed = {f.path for f in load_manifest().files}
    read = set()
    for p in [*(REPO / "config").rglob("*.yaml"), REPO / "src/autograde/reproduce/config.py"]:
        read |= set(re.findall(r"\.\./shared/data/([\w./-]+\.\w+)", p.read_text(encoding="utf-8")))
    assert read and read <= listed, sorted(read - listed)


@pytest.mark.skipif(not has_shared_data(), reason=f"reference data missing: {SHARED_DATA} is not present")
def test_the_manifest_checksums_are_those_of_the_reference_copy() -> None:
    """Every file of ../shared/data that the manifest lists has the manifest's size and sha256 (the public files
    the manifest points at were matched against these copies)."""
    outcomes = verify(load_manifest(), SHARED_DATA)
    present = [o for o in outcomes if o.status != "missing"]
    assert present and all(o.status == "present" for o in present), [o for o in present if o.status != "present"]
    listed = {o.path for o in outcomes}
    unlisted = [p.relative_to(SHARED_DATA).as_posix() for p in SHARED_DATA.rglob("*")
                if p.is_file() and p.name != "README.md" and p.relative_to(SHARED_DATA).as_posix() not in listed]
    assert not unlisted, f"files of the reference copy the manifest does not list: {unlisted}"


def test_a_bad_manifest_names_the_entry_and_the_problem(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("folder: data\nfiles:\n  - {path: ../x.txt, what: x, size: null, sha256: null, url: null, source: s}\n"
                 "  - {path: y.txt, what: y, size: 1, sha256: null, url: null, source: s}\n")
    with pytest.raises(ConfigError) as err:
        load_manifest(p)
    text = str(err.value)
    assert "files.[../x.txt].path" in text and "relative path" in text
    assert "files.[y.txt]: Value error, give both size and sha256" in text


def test_the_manifest_fills_the_folder_whose_missing_files_validate_sends_to_make_data() -> None:
    """``autograde validate`` says "run `make data`" for a missing file under core.layout.REFERENCE_DATA: the folder
    the manifest (and so `make data`) fills."""
    from autograde.core.layout import REFERENCE_DATA, made_by

    assert load_manifest().folder == REFERENCE_DATA
    assert "run `make data`" in (made_by(f"{REFERENCE_DATA}/{load_manifest().files[0].path}") or "")
