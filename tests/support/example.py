"""The bundled example as a test experiment: its data and a trimmed config (fast on 2 cores)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from support.helpers import REPO

EXAMPLE = REPO / "config" / "example"


def write_example_experiment(root: Path) -> Path:
    """The bundled example's data under ``root/data`` and a trimmed experiment config (fast on 2 cores: one
    grader, two shards, one threshold, two measures)."""
    shutil.copytree(EXAMPLE, root / "data")
    cfg = root / "config.yaml"
    cfg.write_text(textwrap.dedent("""\
        data:
          queries: data/queries.tsv
          corpus: [data/corpus.jsonl]
          runs: ["data/runs/*.run"]
          answers: [data/answers/rag-gen.jsonl]
          qrels: data/qrels.txt
          official_leaderboard: data/official_leaderboard.json
        banks:
          questions: data/bank/questions.jsonl
          nuggets: data/bank/nuggets.jsonl
        grading:
          shards: 2
          cache_dir: cache
        graders:
          - name: minilm-questions
            backend: embedded
            bank: questions
            prompt_class: QuestionSelfRatedUnanswerablePromptWithChoices
        qrels:
          modes: [max, count]
          thresholds: [4]
        evaluation:
          measures: [ndcg_cut_10, recip_rank]
        reports:
          bootstrap_samples: 200
          bootstrap_seed: 7
        """))
    return cfg
