"""docs/rubric.md quotes the benchmark's generated tables verbatim: every ``<!-- generated: PATH -->`` block must
equal the file at PATH (regenerate with ``benchmarks/rubric_transfer.py`` and paste, never edit by hand)."""

from __future__ import annotations

import re

from support.helpers import REPO

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)


def test_generated_quotes_match_their_files() -> None:
    text = (REPO / "docs" / "rubric.md").read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 5
    for path, quoted in blocks:
        generated = (REPO / path).read_text(encoding="utf-8")
        assert quoted.strip() == generated.strip(), f"docs/rubric.md quotes {path} out of date"
