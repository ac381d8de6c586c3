"""Tiny hand-made rubric data (every generating rule stated) for the LLM-RUBRIC and calibration tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograde.config.rubric import Hyperparameters
from autograde.rubric.tables import Annotation, HumanAnswers, LlmAnswers

TINY_RUBRIC = {
    "name": "tiny",
    "main": "Q0",
    "questions": [
        {"id": "Q0", "text": "Overall quality?", "options": [1, 2, 3, 4]},
        {"id": "Q1", "text": "Enough turns?", "options": [1, 2, 3], "na": True},  # 3 options, like Q8
    ],
}

FAST = Hyperparameters(hidden1=8, hidden2=8, learning_rate=0.02, batch_size=32, pretrain_epochs=60,
                       finetune_epochs=60, patience=8, members=2)
"""Small and quick settings for the hand-made data."""


def _peaked(center: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """A distribution over n options peaked near ``center`` (1-based), with noise."""
    logits = -((np.arange(1, n + 1) - center) ** 2) + rng.normal(0, 0.3, n)
    p = np.exp(logits)
    return p / p.sum()


def tiny_tables(n_texts: int = 60, seed: int = 0) -> tuple[LlmAnswers, HumanAnswers]:
    """Texts t00..: latent quality q in 1..4; the LLM's Q0 distribution peaks at q, its Q1 at 1 + (q >= 3) * 2.

    Judges: 'fair' answers Q0 = q, 'harsh' answers Q0 = max(1, q - 1), 'fan' always answers Q0 = 4.
    Q1 answers: 'fair' gives 1 + 2 * (q >= 3); 'harsh' gives NA (MISSING) on every third text; 'fan' gives 3.
    """
    rng = np.random.default_rng(seed)
    llm, human = LlmAnswers(), HumanAnswers()
    for i in range(n_texts):
        t = f"t{i:02d}"
        q = int(rng.integers(1, 5))
        llm.probs[t] = {"Q0": _peaked(q, 4, rng), "Q1": _peaked(1 + 2 * (q >= 3), 3, rng)}
        llm.groups[t] = t
        q1 = 2 * (q >= 3)  # option index of 1 + 2 * (q >= 3)
        human.annotations += [
            Annotation(t, "fair", (q - 1, q1), "tiny", i),
            Annotation(t, "harsh", (max(0, q - 2), -1 if i % 3 == 0 else q1), "tiny", i),
            Annotation(t, "fan", (3, 2), "tiny", i),
        ]
    return llm, human


def write_tiny_files(root: Path, n_texts: int = 40) -> dict[str, Path]:
    """The tiny tables in LLM-RUBRIC's released TSV formats plus the rubric YAML; returns their paths."""
    import yaml

    llm, human = tiny_tables(n_texts)
    root.mkdir(parents=True, exist_ok=True)
    rubric = root / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(TINY_RUBRIC, sort_keys=False))
    rows = ["text_id\tcriterion\tsample_llm\tanswer1_prob\tanswer2_prob\tanswer3_prob\tanswer4_prob"]
    for t, per_q in sorted(llm.probs.items()):
        for qid, p in per_q.items():
            probs = list(p) + [0.0] * (4 - len(p))
            rows.append("\t".join([t, qid, str(int(np.argmax(p)) + 1)] + [f"{x:.10f}" for x in probs]))
    llm_path = root / "llm.tsv"
    llm_path.write_text("\n".join(rows) + "\n")
    hrows = ["round\ttext_id\tDQQ0\tQ1\tQ0\tannotator_id"]
    for a in human.annotations:
        q0 = a.answers[0] + 1
        q1 = 0 if a.answers[1] < 0 else a.answers[1] + 1  # 0 = NA in this format
        hrows.append(f"r1\t{a.text_id}\t1\t{q1}\t{q0}\t{a.judge}")
    human_path = root / "human.tsv"
    human_path.write_text("\n".join(hrows) + "\n")
    return {"rubric": rubric, "llm": llm_path, "human": human_path}
