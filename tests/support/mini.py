"""The tiny inline dataset of the workflow tests (every judgment commented) and its experiment config, and the
mutations the bad-input tests break it with (a config key set, a file written, a text replaced)."""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import yaml

# Three queries; passages written for the test. Judgments: 2 = answers the query, 1 = related, 0 = off topic.
MINI_QUERIES = {"q1": "how do bees make honey", "q2": "what causes ocean tides", "q3": "how to bake sourdough bread"}
MINI_CORPUS = {
    "d1a": "Bees collect flower nectar, store it in their honey stomach and pass it to hive bees.",  # q1: 2
    "d1b": "Hive bees fan nectar with their wings to evaporate water until it thickens into honey.",  # q1: 2
    "d1c": "Beekeepers wear protective suits and use smoke to calm the colony.",  # q1: 1
    "d1d": "The stock market closed higher on Tuesday after strong earnings reports.",  # q1: 0
    "d2a": "Tides are caused by the gravitational pull of the moon and the sun on the oceans.",  # q2: 2
    "d2b": "Spring tides happen when the sun and moon align, producing higher high tides.",  # q2: 2
    "d2c": "Surfers check tide tables before heading to the beach.",  # q2: 1
    "d2d": "Honey never spoils because of its low water content and acidity.",  # q2: 0
    "d3a": "Sourdough bread rises thanks to a starter of wild yeast and lactic acid bacteria.",  # q3: 2
    "d3b": "Bake the shaped dough in a preheated Dutch oven at 250 °C for the first twenty minutes.",  # q3: 2
    "d3c": "Rye flour was common in medieval European bread.",  # q3: 1
    "d3d": "The moon orbits the earth roughly every 27 days.",  # q3: 0
}
MINI_QRELS = {"q1": {"d1a": 2, "d1b": 2, "d1c": 1, "d1d": 0}, "q2": {"d2a": 2, "d2b": 2, "d2c": 1, "d2d": 0},
              "q3": {"d3a": 2, "d3b": 2, "d3c": 1, "d3d": 0}}
MINI_BANK = {
    "q1": ["Where do bees store nectar while foraging?", "How do bees remove water from nectar?"],
    "q2": ["Which celestial bodies cause tides?", "When do spring tides occur?"],
    "q3": ["What makes sourdough bread rise?", "At what temperature is sourdough baked?"],
}


def write_mini_dataset(root: Path, shards: int = 2, reports: bool = False) -> Path:
    """Write the tiny dataset and a config under ``root``; returns the config path. The verification reports and
    the site are off unless ``reports`` (they are under test elsewhere, and a run without them is half as long)."""
    d = root / "data"
    (d / "runs").mkdir(parents=True, exist_ok=True)
    (d / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in MINI_QUERIES.items()))
    (d / "corpus.jsonl").write_text("".join(json.dumps({"doc_id": k, "text": v}) + "\n" for k, v in MINI_CORPUS.items()))
    (d / "qrels.txt").write_text("".join(f"{q} 0 {p} {r}\n" for q, docs in MINI_QRELS.items() for p, r in docs.items()))
    good = "".join(f"{q} Q0 {p} {i + 1} {10 - i} good\n" for q in MINI_QRELS for i, p in enumerate(sorted(MINI_QRELS[q])))
    bad = "".join(f"{q} Q0 {p} {i + 1} {10 - i} bad\n" for q in MINI_QRELS for i, p in enumerate(sorted(MINI_QRELS[q], reverse=True)))
    (d / "runs" / "good.run").write_text(good)
    (d / "runs" / "bad.run").write_text(bad)
    (d / "answers.jsonl").write_text(
        json.dumps({"query_id": "q1", "run": "gen", "text": "Bees carry nectar home.\n\nThey fan it until it becomes honey."}) + "\n"
        + json.dumps({"query_id": "q2", "run": "gen", "text": "The moon's gravity pulls the oceans."}) + "\n")
    items = []
    from autograde.core.ids import item_id

    for q, qs in MINI_BANK.items():
        items.append(json.dumps({"query_id": q, "query_text": MINI_QUERIES[q], "info": {"prompt_target": "questions"},
                                 "items": [{"query_id": q, "question_id": item_id(q, t), "question_text": t} for t in qs]}))
    (d / "questions.jsonl").write_text("\n".join(items) + "\n")
    (d / "official.json").write_text(json.dumps({"good": 1, "gen": 2, "bad": 3}))
    cfg = root / "config.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        data:
          queries: data/queries.tsv
          corpus: [data/corpus.jsonl]
          runs: ["data/runs/*.run"]
          answers: [data/answers.jsonl]
          qrels: data/qrels.txt
          official_leaderboard: data/official.json
        banks:
          questions: data/questions.jsonl
        grading:
          shards: {shards}
          cache_dir: cache
        graders:
          - name: sim
            backend: embedded
            bank: questions
        qrels:
          modes: [max, count]
          thresholds: [3]
        evaluation:
          measures: [ndcg_cut_10, recip_rank]
        reports:
          enabled: {str(reports).lower()}
        """))
    return cfg


Mutation = Callable[[Path], None]


def edit_config(**updates: object) -> Mutation:
    """Set dotted keys of config.yaml (``qrels__thresholds=[9]`` sets qrels.thresholds)."""

    def mutate(root: Path) -> None:
        cfg = yaml.safe_load((root / "config.yaml").read_text())
        for dotted, value in updates.items():
            node = cfg
            *parents, last = dotted.split("__")
            for p in parents:
                node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
            node[last] = value
        (root / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))

    return mutate


def write(rel: str, text: str, mode: str = "w") -> Mutation:
    def mutate(root: Path) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if mode == "a":
            with p.open("a", encoding="utf-8") as fh:
                fh.write(text)
        else:
            p.write_bytes(text.encode("utf-8"))

    return mutate


def replace(rel: str, old: str, new: str) -> Mutation:
    def mutate(root: Path) -> None:
        p = root / rel
        text = p.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        p.write_text(text.replace(old, new, 1), encoding="utf-8")

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(root: Path) -> None:
        for m in mutations:
            m(root)

    return mutate


def assert_refused_before_any_work(config: Path, messages: io.StringIO, mutate: Mutation, expected: str,
                                   case: str) -> None:
    """Break the tiny dataset with ``mutate``: ``autograde validate`` exits 2, its messages hold ``expected`` and a
    fix, and no results folder exists (nothing ran)."""
    from autograde.cli import main

    mutate(config.parent)
    assert main(["validate", "--config", str(config)]) == 2, case
    text = messages.getvalue()
    assert expected in text, text
    assert "fix:" in text
    assert not (config.parent / "results").exists()
