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
