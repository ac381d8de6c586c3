"""``autograde sample``: which passages to judge next, and how far to trust a leaderboard from a few human labels.

Examples::

    autograde sample draw --budget 40 --design simple_random --seed 1      # round 1: the worklist to judge
    autograde sample draw --budget 40 --design stratified --seed 2         # round 2, Neyman allocation from round 1
    autograde sample estimate                                              # estimates with intervals (no Snakemake)
    autograde sample answer --from config/example/qrels.txt                # demo: judge the worklist from a qrels file

``draw`` extends the design file of ``human_sample.design`` (or ``--design-file``) with a new round and writes the
round's worklist (query, passage id, inclusion probability, query and passage text); the review site's judging
page shows the same passages. Judgments go to ``human_sample.qrels``; ``estimate`` writes what the workflow's rule
writes under ``results/human_sample/``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from autograde.cli.common import add_command, add_config_option, load_experiment


def _design_file(args: argparse.Namespace, config: Any) -> str:
    from autograde.core.errors import ConfigError

    path = args.design_file or (config.human_sample.design if config.human_sample else None)
    if not path:
        raise ConfigError("no design file: set human_sample.design in the experiment config or give --design-file")
    return str(path)


def cmd_draw(args: argparse.Namespace) -> int:
    from autograde.ppi.stages import run_draw

    config = load_experiment(args)
    design = _design_file(args, config)
    worklist = args.worklist or design.removesuffix(".tsv") + f".worklist-{_next_round(design)}.tsv"
    record = run_draw(config, args.design, args.budget, args.seed, design, worklist, args.prediction,
                      args.uniform_share, args.importance_depth, args.qrels)
    print(json.dumps({**record, "design_file": design, "worklist": worklist}, indent=2, sort_keys=True))
    return 0


def _next_round(design: str) -> int:
    from pathlib import Path

    if not Path(design).is_file():
        return 1
    first = Path(design).open(encoding="utf-8").readline()
    return first.count('"round":') + 1


def cmd_estimate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from autograde.core.layout import Layout
    from autograde.ppi.stages import run_estimates
    from autograde.ppi.workflow import estimate_outputs

    config = load_experiment(args)
    lay = Layout.of(config.results_dir)
    outputs = estimate_outputs(config)
    for f in outputs.values():
        Path(f).parent.mkdir(parents=True, exist_ok=True)
    summary = run_estimates(config, lay.pool, lay.ingest("rankings"), outputs, args.qrels, args.design_file)
    print(json.dumps({"outputs": outputs, "sample": summary["sample"]}, indent=2, sort_keys=True, default=str))
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    from autograde.ppi.stages import required_section, run_answer

    config = load_experiment(args)
    out = args.out or required_section(config).qrels
    if not out:
        from autograde.core.errors import ConfigError

        raise ConfigError("no output: set human_sample.qrels or give --out")
    n = run_answer(config, getattr(args, "from"), out, args.design_file)
    print(json.dumps({"judgments": n, "out": out}))
    return 0


def register(subparsers: Any) -> None:
    """Add ``sample`` with its subcommands to the ``autograde`` CLI."""
    p = subparsers.add_parser("sample", help="judging worklists and estimates with intervals from a human sample",
                              description="Which passages to judge next (designs with known inclusion "
                              "probabilities, in rounds) and prediction-powered estimates with intervals for every "
                              "system and measure from the judged sample.")
    sub = p.add_subparsers(dest="sample_command", required=True)

    d = add_command(sub, "draw", "draw the next round of the judging design and write its worklist")
    add_config_option(d)
    d.add_argument("--budget", type=float, required=True, help="expected number of passages to judge in this round")
    d.add_argument("--design", choices=["simple_random", "stratified", "active"], default="simple_random",
                   help="how inclusion probabilities are chosen (default: simple_random)")
    d.add_argument("--seed", type=int, default=0, help="seed of the draw: the same seed draws the same passages")
    d.add_argument("--prediction", default=None, help="the prediction of human_sample.predictions that stratifies "
                   "or targets the draw (default: the first)")
    d.add_argument("--uniform-share", type=float, default=0.2, help="share of the budget spread uniformly in the "
                   "stratified and active designs, so every passage can be drawn (default: 0.2)")
    d.add_argument("--importance-depth", type=int, default=10, help="rank depth of each system that makes a passage "
                   "count in the stratified and active designs (default: 10)")
    d.add_argument("--design-file", default=None, help="the design file to create or extend (default: "
                   "human_sample.design)")
    d.add_argument("--worklist", default=None, help="where the round's worklist goes (default: beside the design "
                   "file, <design>.worklist-<round>.tsv)")
    d.add_argument("--qrels", default=None, help="the judgments so far, the pilot of stratified and active designs "
                   "(default: human_sample.qrels)")
    d.set_defaults(func=cmd_draw)

    e = add_command(sub, "estimate", "estimates with intervals for every system and measure, and the comparisons")
    add_config_option(e)
    e.add_argument("--qrels", default=None, help="the judged sample (default: human_sample.qrels)")
    e.add_argument("--design-file", default=None, help="its design file (default: human_sample.design)")
    e.set_defaults(func=cmd_estimate)

    a = add_command(sub, "answer", "judge every drawn passage from a qrels file (demos and simulations; unjudged "
                    "there: grade 0)")
    add_config_option(a)
    a.add_argument("--from", required=True, help="a qrels file that judges the pool (for example the full human qrels)")
    a.add_argument("--out", default=None, help="the sample's qrels file, extended (default: human_sample.qrels)")
    a.add_argument("--design-file", default=None, help="the design file (default: human_sample.design)")
    a.set_defaults(func=cmd_answer)
