"""docs/rubric.md quotes the benchmarks' generated tables verbatim: every ``<!-- generated: PATH -->`` block must
equal the file at PATH (regenerate with ``benchmarks/rubric.py --only-timing``, ``benchmarks/rubric_transfer.py``
and ``benchmarks/rubric_calibrated.py`` and paste, never edit by hand), and the measured numbers the prose needs
(the fit time, the DL20 calibrated-qrels table) are among them."""

from __future__ import annotations

import re

from support.helpers import REPO

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)


def test_generated_quotes_match_their_files() -> None:
    text = (REPO / "docs" / "rubric.md").read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 5
    assert {"docs/generated/rubric_timing.md", "docs/generated/calibrated_qrels_dl20.md"} <= {p for p, _ in blocks}
    for path, quoted in blocks:
        generated = (REPO / path).read_text(encoding="utf-8")
        assert quoted.strip() == generated.strip(), f"docs/rubric.md quotes {path} out of date"


def test_generated_cross_validated_table1_has_the_code_s_current_form() -> None:
    """docs/generated/table1_cv.md (and the quote of it) is what ``table1_markdown`` writes now: its title, caption
    (rows, seeds, resamples read back from the file) and header; a caption from older code (before undefined
    metrics were n/a) means the file is stale: regenerate with ``benchmarks/rubric_transfer.py dialogue --seeds 0
    --cv-seeds 1``."""
    from autograde.rubric.table1 import table1_markdown

    lines = (REPO / "docs" / "generated" / "table1_cv.md").read_text(encoding="utf-8").splitlines()
    found = re.match(r"(\d+) annotations; mean ± sd over seeds ([\d, ]+); .*?, (\d+) resamples\)", lines[2])
    assert found, lines[2]
    report = {"rows": int(found[1]), "seeds": [int(s) for s in found[2].split(", ")], "resamples": int(found[3]),
              "systems": []}
    written = table1_markdown(report, lines[0].removeprefix("## ")).splitlines()
    assert lines[:len(written)] == written
