"""docs/experiments.md's "Your own collection" quotes the corpus benchmarks' generated files verbatim: every
``<!-- generated: PATH -->`` block of it equals the file at PATH (rerun ``benchmarks/corpus_lookup.py --write``
or ``benchmarks/gzip_random_access.py --write`` and paste, never edit by hand), and the section states no measured
time or size outside them."""

from __future__ import annotations

import re

from support.helpers import REPO

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)
CORPUS_FILES = {"docs/generated/corpus_lookup.md", "docs/generated/gzip_random_access.md"}


DOC = REPO / "docs" / "experiments.md"


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## Your own collection", 1)[1].split("\n## ", 1)[0]


def test_the_docs_quote_the_corpus_benchmarks_verbatim() -> None:
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert CORPUS_FILES <= {path for path, _quoted in blocks}
    for path, quoted in blocks:
        generated = (REPO / path).read_text(encoding="utf-8")
        assert quoted.strip() == generated.strip(), f"{DOC.name} quotes {path} out of date"


def test_the_corpus_numbers_are_only_the_generated_ones() -> None:
    """Outside the quoted blocks, "Your own collection" states no seconds, sizes or speed-ups of the corpus index
    (those of the run-file benchmark, `benchmarks/run_reading.py`, are its own)."""
    prose = BLOCK.sub("", _section()).split("Reading a run file of 10^7 lines", 1)[0]
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("| ir_datasets id"))
    measured = re.findall(r"\d[\d.,]* ?(?:s|ms|MB|GB|x)\b", prose)
    assert not measured, f"measured numbers typed by hand in the corpus section: {measured}"
