"""The track specs and their checks against the track's own package (autojudge-base 1.0.0 in its environment): every
spec field equal; the findings (category and whether it fails or warns) of every report of the fixtures and of
variants broken one way each, per report and across a run's reports, equal to the track's verifier's; every fixture
converted to every track's format byte for byte as ``auto-judge-report convert`` writes it; our own findings name
file, line and fix."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

from support.helpers import TEST_DATA
from support.reference_envs import AUTOJUDGE_BASE_VENV, AUTOJUDGE_BASE_VERSION, run_reference, run_tool

from autograde.core.errors import Problems
from autograde.io.reports import iter_reports, parse_report, write_reports
from autograde.io.track_checks import check_report_files, check_run
from autograde.io.track_convert import convert_report
from autograde.io.track_specs import CATEGORIES, SPEC_NAMES, get_spec, load_specs

FIXTURES = TEST_DATA / "autojudge"
TARGET = "autojudge-base-env"

SPECS_SCRIPT = """
import dataclasses, json
from importlib.metadata import version
from autojudge_base.track_spec import SPECS, KNOWN_SMELL_CATEGORIES
print(json.dumps({"version": version("autojudge-base"), "categories": list(KNOWN_SMELL_CATEGORIES),
                  "specs": {k: dataclasses.asdict(v) for k, v in SPECS.items()}}))
"""

CHECKS_SCRIPT = """
import json, sys
from autojudge_base.report import Report
from autojudge_base.request import Request
from autojudge_base.report_spec_verification import TrackSpecVerification
from autojudge_base.report_verification import ReportVerification
from autojudge_base.track_spec import get_spec
out = []
for case in json.load(sys.stdin):
    spec = get_spec(case["spec"])
    reports = [Report.model_validate(r) for r in case["reports"]]
    requests = {str(q["request_id"]): Request.model_validate(q) for q in case["requests"]}
    found = []
    for r in reports:
        v = TrackSpecVerification(r, spec, request=requests.get(str(r.metadata.topic_id)))
        v._add = lambda c, m: found.append([c, "warning" if c in spec.smells else "error"])
        v.run()
    rv = ReportVerification(reports, spec, requests=requests).coverage()
    found += [[f.category, f.severity] for f in rv.findings]
    out.append(sorted(found))
print(json.dumps(out))
"""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_bundled_specs_are_the_tracks() -> None:
    ref = run_reference(AUTOJUDGE_BASE_VENV, TARGET, SPECS_SCRIPT, None)
    assert ref["version"] == AUTOJUDGE_BASE_VERSION
    assert sorted(ref["specs"]) == sorted(load_specs()) == sorted(SPEC_NAMES)
    assert sorted(ref["categories"]) == sorted(CATEGORIES)
    for name, theirs in ref["specs"].items():
        assert theirs.pop("forbid_extra_metadata") is False  # a raw-wire check the track's verifier leaves out too
        ours = json.loads(json.dumps(dataclasses.asdict(get_spec(name))))
        assert ours == theirs, name


def _words(n: int) -> str:
    return " ".join(["word"] * n)


def _variants(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The report as it is, and broken one way each (every variant still loads in the track's report model)."""
    key = "answer" if "answer" in rec else "responses"
    sents = rec[key]
    out = [rec]

    def variant(change: Any) -> None:
        r = copy.deepcopy(rec)
        change(r)
        out.append(r)

    variant(lambda r: r[key].append({"text": "   ", "citations": None}))
    variant(lambda r: r[key].__setitem__(0, {"text": _words(900), "citations": sents[0].get("citations")}))
    variant(lambda r: r.__setitem__(key, []))
    variant(lambda r: r.__setitem__(key, [{"text": " ", "citations": None}]))
    variant(lambda r: r["metadata"].pop("team_id") and r["metadata"].__setitem__("team_id", ""))
    variant(lambda r: r["metadata"].__setitem__("run_id", "x" * 30))
    variant(lambda r: [r["metadata"].pop(k, None) for k in ("type", "run_desc", "narrative", "use_starter_kit")])
    if r_refs := rec.get("references"):
        variant(lambda r: r["references"].append(r_refs[0]))
        variant(lambda r: r["references"].append("not-a-doc-id"))
        variant(lambda r: r.pop("references"))
        variant(lambda r: r["references"].extend(f"msmarco_v2.1_doc_00_{i}#0_{i}" for i in range(101)))
    cites = sents[0].get("citations")
    if isinstance(cites, list) and cites and isinstance(cites[0], int):
        variant(lambda r: r[key][0].__setitem__("citations", [0, 0, 0, 0, 9]))
    elif isinstance(cites, list) and cites:
        variant(lambda r: r[key][0].__setitem__("citations", [*cites, "x1", "x2", "x3"]))
    elif isinstance(cites, dict):
        variant(lambda r: r[key][0]["citations"].update({"zz": 0.1, "yy": 0.2, "xx": 0.3}))
    return out


def _cases() -> list[dict[str, Any]]:
    """(spec, one run's reports, topics) cases: each variant of each report as a run of its own, and the fixture
    runs whole (coverage: missing, new and repeated topics, narratives)."""
    cases = []
    for folder, specs in (("rag24", ("rag25", "rag26", "rag25-autojudge", "dragun25")), ("ragtime", ("ragtime25", "ragtime26")),
                          ("neuclir", ("dragun25", "kiddie", "ragtime26"))):
        topics = _lines(FIXTURES / folder / "topics.jsonl")
        for path in sorted((FIXTURES / folder / "runs").glob("*.jsonl")):
            recs = _lines(path)
            for spec in specs:
                cases.append({"spec": spec, "reports": recs, "requests": topics})
                cases.append({"spec": spec, "reports": recs[:-1] + recs[:1], "requests": topics})  # missing + repeated
                cases.append({"spec": spec, "reports": recs, "requests": topics[:-1]})  # a topic not in the file
                cases += [{"spec": spec, "reports": [v], "requests": topics} for v in _variants(recs[0])[1:]]
    return cases


def _ours(case: dict[str, Any], tmp: Path) -> list[list[str]]:
    reports = [parse_report(r, "x.jsonl", n, Problems()) for n, r in enumerate(case["reports"], start=1)]
    requests = {str(q["request_id"]): q for q in case["requests"]}
    found = check_run([r for r in reports if r is not None], get_spec(case["spec"]), requests)
    return sorted([f.category, f.severity] for f in found)


def test_findings_equal_the_tracks_verifier(tmp_path: Path) -> None:
    cases = _cases()
    theirs = run_reference(AUTOJUDGE_BASE_VENV, TARGET, CHECKS_SCRIPT, cases)
    seen: Counter[str] = Counter()
    for case, ref in zip(cases, theirs, strict=True):
        ours = _ours(case, tmp_path)
        assert ours == ref, (case["spec"], json.dumps(case["reports"])[:300])
        seen.update(c for c, _ in ours)
    assert len(cases) > 150
    untested = set(CATEGORIES) - set(seen) - {"citation_score", "references_present"}
    assert not untested, untested  # no spec has references_kind none; a non-numeric score fails the track's model


CONVERT_SCRIPT = """
import json, sys, tempfile
from pathlib import Path
from autojudge_base.report import load_report
from autojudge_base.report_export import write_submission_output
job = json.load(sys.stdin)
out = {}
for path in job["files"]:
    for spec in job["specs"]:
        target = Path(tempfile.mkdtemp()) / "out.jsonl"
        write_submission_output(load_report(Path(path)), target, spec)
        out[f"{path}|{spec}"] = target.read_text(encoding="utf-8")
print(json.dumps(out))
"""


def test_conversion_equals_the_tracks_byte_for_byte(tmp_path: Path) -> None:
    """Every fixture file in every track's format: the track's export (what ``auto-judge-report convert`` runs, all
    conversions in one process) and the command itself once."""
    files = [str(p) for p in sorted(FIXTURES.glob("*/runs/*.jsonl"))]
    theirs = run_reference(AUTOJUDGE_BASE_VENV, TARGET, CONVERT_SCRIPT, {"files": files, "specs": list(SPEC_NAMES)})
    for path in files:
        reports = list(iter_reports(path, Problems()))
        for spec in SPEC_NAMES:
            ours = tmp_path / "ours.jsonl"
            write_reports(ours, [convert_report(r, get_spec(spec)) for r in reports])
            assert ours.read_text(encoding="utf-8") == theirs[f"{path}|{spec}"], (path, spec)
    cli = tmp_path / "cli.jsonl"
    run = run_tool(AUTOJUDGE_BASE_VENV, TARGET, "auto-judge-report", ["convert", *files, "--to", "rag26", "-o", str(cli)])
    assert run.returncode == 0, run.stdout + run.stderr
    assert cli.read_text(encoding="utf-8") == "".join(theirs[f"{p}|rag26"] for p in files)


def test_our_findings_name_file_line_and_fix(tmp_path: Path) -> None:
    src = _lines(FIXTURES / "rag24" / "runs" / "good.jsonl")
    broken = copy.deepcopy(src)
    broken[1]["references"].append("not-a-doc-id")
    broken[2]["metadata"]["narrative"] = "something else"
    path = tmp_path / "good.jsonl"
    write_reports(path, broken)
    requests = {str(q["request_id"]): q for q in _lines(FIXTURES / "rag24" / "topics.jsonl")}
    problems = Problems()
    found = check_report_files([path], get_spec("rag25"), requests, problems)
    errors = [(p.line, p.message.split(": ", 1)[1][:20]) for p in problems.items]
    assert errors == [(2, "reference 'not-a-doc"), (3, "metadata.narrative o")]
    assert all(p.fix and p.path == str(path) for p in problems.items)
    assert {f.category for f in found if f.severity == "warning"} == {"references_uncited"}  # a smell of rag25
