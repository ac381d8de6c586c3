"""docs/audit.md quotes the generated tables verbatim: every ``<!-- generated: PATH -->`` block must equal the file at
PATH (regenerate with ``benchmarks/judge_audit.py`` and paste, never edit by hand); the DL20 table is recomputed here
from the released qrels, so a changed statistic fails until the documentation is regenerated."""

from __future__ import annotations

import re

from support.helpers import REPO, shared_data

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- /generated -->", re.S)


def test_generated_quotes_match_their_files() -> None:
    text = (REPO / "docs" / "audit.md").read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert {p for p, _ in blocks} >= {"docs/generated/audit_dl20_labels.md", "docs/generated/audit_example_labels.md",
                                      "docs/generated/audit_example_smollm2-umbrela.md"}
    for path, quoted in blocks:
        assert quoted.strip() == (REPO / path).read_text(encoding="utf-8").strip(), f"docs/audit.md quotes {path} out of date"


def test_the_dl20_table_is_what_the_released_qrels_give() -> None:
    from autograde.audit.report import labels_markdown
    from autograde.audit.stages import label_tables
    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    thresholds = {"QuestionSelfRatedUnanswerablePromptWithChoices": 4, "NuggetSelfRatedPrompt": 4, "FagB": 1,
                  "FagB_few": 1, "HELM": 1, "Sun": 1, "Sun_few": 1, "Thomas": 1}
    judged = qrels_pairs(read_qrels(shared_data("dl20", "qrels.dl20-passage.txt")))
    sources = [(p, f"max-{t}", qrels_pairs(read_qrels(shared_data("dl20", "autograded-qrels", f"{p}.qrel"))), t)
               for p, t in thresholds.items()]
    table = labels_markdown(label_tables(sources, judged, 2).labels)
    assert table.strip() == (REPO / "docs" / "generated" / "audit_dl20_labels.md").read_text(encoding="utf-8").strip()
