"""README.md stays true: its config table is the one generated from the config models, and its measured numbers
are those of docs/measurements.json (written by benchmarks/measure_readme.py and benchmarks/dl20_edit.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.helpers import REPO, run_workflow

from autograde.config.reference import REFERENCE_FILE, reference_document


def test_the_config_reference_is_up_to_date_and_linked() -> None:
    """docs/config.md is the reference generated from the config models, and README.md links it."""
    current = (REPO / REFERENCE_FILE).read_text(encoding="utf-8")
    assert current == reference_document(), (
        f"{REFERENCE_FILE} is stale: run python -m autograde.config.reference --write {REFERENCE_FILE}")
    assert f"({REFERENCE_FILE})" in (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_names_the_two_setup_commands_that_ci_runs() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "make example" in text and "make test" in text and "make test" in ci


def _measured() -> dict:
    return json.loads((REPO / "docs" / "measurements.json").read_text(encoding="utf-8"))


def test_measured_numbers_come_from_the_measurements_file() -> None:
    """Every measured number README.md states about running the tool is the one benchmarks/measure_readme.py
    wrote to docs/measurements.json (rerun it and commit the file when they move)."""
    m = _measured()
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    ex, edit = m["example"], m["edit_rerun"]
    phrases = [
        f"the example itself runs in {ex['seconds']} s ({ex['jobs']} jobs",
        f"the rerun of the bundled example after a one-question edit takes {edit['seconds']} s ({edit['jobs']} jobs",
        f"validates in {m['dl20_validate']['seconds']} s ({m['dl20_validate']['ranked_passages'] / 1e6:.1f} M ranked",
        "(`docs/measurements.json`, measured on " + m["measured_on"]["date"],
    ]
    suite = "`make test` runs the lint and the suite in about"
    if "test_suite" in m:
        phrases.append(f"{suite} {m['test_suite']['minutes']} minutes there ({m['test_suite']['passed']} passed")
        fast = m["test_fast"]
        phrases.append(f"without the lint. Measured there: {fast['minutes']} minutes ({fast['passed']} passed)")
    else:  # only while benchmarks/measure_readme.py --tests measures it for the first time
        assert suite not in text, "README.md states a test-suite time that docs/measurements.json lacks"
    missing = [p for p in phrases if p not in text]
    assert not missing, f"README.md does not state these measured numbers as measured: {missing}"


@pytest.mark.workflow
def test_the_example_plans_the_measured_number_of_jobs(tmp_path: Path) -> None:
    """The example's job count in docs/measurements.json is what the workflow plans today (a dry run)."""
    wd = tmp_path / "clone"
    shutil.copytree(REPO / "config", wd / "config")
    res = run_workflow(wd, "-n", "--forceall", configfile=False, cores=1, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    total = [line.split()[-1] for line in res.stdout.splitlines() if line.startswith("total")]
    assert total and int(total[-1]) == _measured()["example"]["jobs"]


def test_docs_numbers_come_from_the_measurements_file() -> None:
    """docs/reports.md states the example's site and correlation numbers as measured (docs/measurements.json)."""
    m = _measured()
    site, ex = m["example_site"], m["example"]
    text = " ".join((REPO / "docs" / "reports.md").read_text(encoding="utf-8").split())
    phrase = (f"{site['pages']} pages and {site['megabytes']} MB ({site['files']} files, {site['plots']} of them "
              f"plots), {site['leaderboards_correlated']} leaderboards in the correlation report")
    assert phrase in text, phrase
    assert f"the whole example workflow takes {ex['seconds']} s on 2 cores" in text


def _dl20_edit_phrase(m: dict) -> str:
    """How README.md and docs/banks.md state benchmarks/dl20_edit.py's measurement (the edit loop at DL20 size)."""
    e = m["dl20_edit"]
    return (f"a full run takes {e['full_seconds']} s ({e['full_jobs']} jobs) and the rerun after a one-question edit "
            f"{e['edit_seconds']} s ({e['edit_jobs']} jobs, {e['ratio']:.1%} of the full run)")


def test_dl20_edit_numbers_come_from_the_measurements_file() -> None:
    """The DL20-size edit loop (full run vs one-question edit rerun) is stated as benchmarks/dl20_edit.py measured it."""
    m = _measured()
    phrase = _dl20_edit_phrase(m)
    for doc in ("README.md", "docs/banks.md"):
        text = " ".join((REPO / doc).read_text(encoding="utf-8").split())
        assert phrase in text, f"{doc} does not state: {phrase}"
    counts = m["dl20_edit"]["edit_evaluation_queries"]
    assert counts["computed"] < counts["cached"], counts  # the edit's evaluation computed a few queries, not all


def test_cluster_docs_quote_the_generated_doctor_output() -> None:
    """docs/cluster.md shows `autograde doctor` as tools/doctor_example.py wrote it (docs/generated/doctor_example.txt)."""
    generated = (REPO / "docs" / "generated" / "doctor_example.txt").read_text(encoding="utf-8")
    assert generated.strip() in (REPO / "docs" / "cluster.md").read_text(encoding="utf-8")
