"""The judging design and the sample over files: a worklist reproducible by seed, rounds that add up, estimates
that use every judgment, and every bad input a clear error naming its file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from autograde.core.errors import AutogradeError, InputError
from autograde.ppi.stages import read_sample, run_answer, run_draw, run_estimates
from autograde.ppi.workflow import estimate_outputs


def _draw(t: dict[str, Any], kind: str = "simple_random", budget: float = 8, seed: int = 1,
          design: Path | None = None, worklist: Path | None = None) -> dict[str, Any]:
    """A round of the design the tiny config names, its judgments so far (the config's sample) the pilot."""
    d = design or t["root"] / "judging" / "design.tsv"
    return run_draw(t["config"], kind, budget, seed, str(d), str(worklist) if worklist else None,
                    qrels=str(t["root"] / "judging" / "sample.qrels"))


def _answer(t: dict[str, Any]) -> None:
    run_answer(t["config"], str(t["truth_qrels"]), str(t["root"] / "judging" / "sample.qrels"))


def test_the_worklist_is_reproducible_by_seed(tiny: dict[str, Any]) -> None:
    j = tiny["root"] / "judging"
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        _draw(tiny, "active", 8, seed, j / f"{name}.tsv", j / f"{name}.worklist.tsv")
    same = [(j / f"{n}.tsv").read_bytes() for n in "ab"] + [(j / f"{n}.worklist.tsv").read_bytes() for n in "ab"]
    assert same[0] == same[1] and same[2] == same[3]
    assert (j / "a.tsv").read_bytes() != (j / "c.tsv").read_bytes()
    work = pd.read_csv(j / "a.worklist.tsv", sep="\t", dtype=str)
    assert list(work.columns) == ["round", "query_id", "passage_id", "query", "passage"]
    assert len(work) > 0 and work["passage"].str.startswith("passage ").all()


def test_a_second_round_adds_to_the_first_and_the_design_file_records_both(tiny: dict[str, Any]) -> None:
    first = _draw(tiny, "simple_random", 8, 1)
    _answer(tiny)
    second = _draw(tiny, "stratified", 8, 2)
    assert (first["round"], second["round"], second["pilot"]) == (1, 2, first["drawn"])
    lines = (tiny["root"] / "judging" / "design.tsv").read_text().splitlines()
    assert lines[0].startswith("#autograde-design") and '"stratified"' in lines[0] and '"simple_random"' in lines[0]
    assert lines[1].split("\t") == ["query_id", "passage_id", "pi_1", "drawn_1", "pi_2", "drawn_2"]
    rows = [line.split("\t") for line in lines[2:]]
    assert all(r[4] == "1.0" for r in rows if r[3] == "1")  # drawn in round 1: known in round 2
    assert not any(r[3] == "1" and r[5] == "1" for r in rows)  # never drawn twice
    _answer(tiny)
    sample = read_sample(tiny["config"], tiny["keys"])
    assert sample.info["rounds"] == 2 and sample.info["pending"] == []
    assert [r.weight for r in sample.rounds] == [0.5, 0.5]
    assert sample.info["judged"] == first["drawn"] + second["drawn"]


def test_estimates_use_every_judgment_and_a_pending_round_is_left_out(tiny: dict[str, Any]) -> None:
    _draw(tiny, "simple_random", 10, 1)
    _answer(tiny)
    _draw(tiny, "active", 6, 2)  # drawn, not judged yet: pending
    outputs = {k: str(tiny["root"] / "out" / k.replace(".", "-")) for k in estimate_outputs(tiny["config"])}
    (tiny["root"] / "out").mkdir()
    summary = run_estimates(tiny["config"], tiny["results"] / "pool" / "pool.parquet",
                            tiny["results"] / "ingest" / "rankings.parquet", outputs)
    judged = sum(1 for _ in (tiny["root"] / "judging" / "sample.qrels").open())
    assert summary["sample"]["judged"] == judged and summary["sample"]["pending"] == [2]
    est = pd.read_csv(outputs["grader.estimates"], sep="\t")
    assert set(est["measure"]) == {"P_5", "dcg_cut_5", "rbp_0.5", "ndcg_cut_5", "map", "recip_rank"}
    assert len(est) == 6 * 4 and (est["low"] <= est["estimate"]).all() and (est["estimate"] <= est["high"]).all()
    diff = pd.read_csv(outputs["grader.differences"], sep="\t")
    assert len(diff) == 6 * 6 and (diff["p_holm"] >= diff["p_value"] - 1e-12).all()


def _problem(exc: pytest.ExceptionInfo[AutogradeError]) -> str:
    return str(exc.value)


def test_a_sample_naming_pairs_outside_the_pool_is_an_error_with_file_and_line(tiny: dict[str, Any]) -> None:
    _draw(tiny)
    _answer(tiny)
    sample = tiny["root"] / "judging" / "sample.qrels"
    with sample.open("a") as f:
        f.write("q1 0 not-pooled 2\n")
    n = len(sample.read_text().splitlines())
    with pytest.raises(InputError) as exc:
        read_sample(tiny["config"], tiny["keys"])
    assert f"{sample}:{n}:" in _problem(exc) and "not in the pool" in _problem(exc)


def test_a_design_that_does_not_match_the_sample_is_an_error_with_file_and_line(tiny: dict[str, Any]) -> None:
    _draw(tiny)
    _answer(tiny)
    design = tiny["root"] / "judging" / "design.tsv"
    sample = tiny["root"] / "judging" / "sample.qrels"
    drawn = [line.split("\t")[:2] for line in design.read_text().splitlines()[2:] if line.split("\t")[3] == "1"]
    not_drawn = next(line.split("\t")[:2] for line in design.read_text().splitlines()[2:]
                     if line.split("\t")[3] == "0")
    # a judgment of a passage the design did not draw: its line in the sample
    with sample.open("a") as f:
        f.write(f"{not_drawn[0]} 0 {not_drawn[1]} 1\n")
    n = len(sample.read_text().splitlines())
    with pytest.raises(InputError) as exc:
        read_sample(tiny["config"], tiny["keys"])
    assert f"{sample}:{n}:" in _problem(exc) and "did not draw it" in _problem(exc)
    # a drawn passage left unjudged: the round is judged in part; the design's line of that passage
    q, d = drawn[0]
    sample.write_text("".join(line + "\n" for line in sample.read_text().splitlines()[:-1]
                              if line.split()[::2] != [q, d]))
    line = next(i for i, x in enumerate(design.read_text().splitlines(), 1) if x.startswith(f"{q}\t{d}\t"))
    with pytest.raises(InputError) as exc:
        read_sample(tiny["config"], tiny["keys"])
    assert f"{design}:{line}:" in _problem(exc) and "no judgment of it" in _problem(exc)


def test_a_design_of_another_pool_is_an_error_with_file_and_line(tiny: dict[str, Any]) -> None:
    _draw(tiny)
    _answer(tiny)
    design = tiny["root"] / "judging" / "design.tsv"
    lines = design.read_text().splitlines()
    lines[5] = "q9\tgone\t" + "\t".join(lines[5].split("\t")[2:])
    design.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        read_sample(tiny["config"], tiny["keys"])
    assert f"{design}:6:" in _problem(exc) and "not in the pool" in _problem(exc)
    assert f"{design}:1:" in _problem(exc) and "have no line" in _problem(exc)


def test_a_budget_larger_than_the_pool_is_an_error(tiny: dict[str, Any]) -> None:
    with pytest.raises(AutogradeError) as exc:
        _draw(tiny, "simple_random", len(tiny["keys"]) + 1)
    assert "does not fit" in _problem(exc) and f"pool has {len(tiny['keys'])} passages" in _problem(exc)


def test_a_zero_inclusion_probability_for_a_sampled_pair_is_an_error_with_file_and_line(tiny: dict[str, Any]) -> None:
    _draw(tiny)
    _answer(tiny)
    design = tiny["root"] / "judging" / "design.tsv"
    lines = design.read_text().splitlines()
    k = next(i for i, x in enumerate(lines) if i >= 2 and x.split("\t")[3] == "1")
    cols = lines[k].split("\t")
    lines[k] = "\t".join([cols[0], cols[1], "0.0", "1"])
    design.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        read_sample(tiny["config"], tiny["keys"])
    assert f"{design}:{k + 1}:" in _problem(exc) and "probability 0" in _problem(exc)


def test_a_simple_random_sample_needs_no_design(tiny: dict[str, Any]) -> None:
    from autograde.config.experiment import load_config

    text = tiny["config_path"].read_text().replace(f"  design: {tiny['root'] / 'judging' / 'design.tsv'}\n",
                                                   "  rate: 0.25\n")
    tiny["config_path"].write_text(text)
    config = load_config(str(tiny["config_path"]))
    rng = np.random.default_rng(0)
    keys = [k for k in tiny["keys"] if rng.random() < 0.25]
    (tiny["root"] / "judging" / "sample.qrels").write_text("".join(f"{q} 0 {d} {tiny['truth'][(q, d)]}\n"
                                                                   for q, d in keys))
    sample = read_sample(config, tiny["keys"])
    assert sample.info["design"] == "simple_random" and sample.info["rate"] == 0.25
    assert sample.rounds[0].sampled.sum() == len(keys)
