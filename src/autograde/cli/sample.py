"""``autograde sample``: which passages to judge next, and how far to trust a leaderboard from a few human labels.

Examples::

    autograde sample draw --budget 40 --design simple_random --seed 1      # round 1: the worklist to judge
    autograde sample answer --from config/example/qrels.txt                # demo: judge it from a qrels file
    autograde sample draw --budget 40 --design stratified --seed 2         # round 2, Neyman allocation from round 1
    autograde sample estimate                                              # the leaderboard with intervals

``draw`` starts or extends the experiment's own design, ``<results_dir>/human_sample/draw/design.tsv`` (or
``--design-file``; the config's ``human_sample.design`` is an input and never written), and writes the round's
worklist beside it (round, query, passage id, query and passage text); ``answer`` writes the judgments to
``draw/sample.qrels`` there. ``estimate`` estimates from that draw when there is one (else from
``human_sample.design`` and ``human_sample.qrels``, as the workflow does), writes the tables and prints each
leaderboard: rank, group, system, estimate and interval, LLM-only value, composite.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.cli.common import add_command, add_config_option, experiment_file, load_experiment
from autograde.config.human_sample import DESIGN_KINDS

if TYPE_CHECKING:
    from autograde.config.model import Config


def _first(config: Config, args: argparse.Namespace, prediction: str | None = None) -> None:
    """Stop with the command to run first when the workflow has not made what a draw reads."""
    from autograde.core.errors import ConfigError
    from autograde.ppi.stages import missing_inputs

    missing = missing_inputs(config, prediction)
    if missing:
        raise ConfigError(f"{missing[0]} does not exist yet{' (and ' + str(len(missing) - 1) + ' more)' if len(missing) > 1 else ''}: "
                          "a draw reads the experiment's pool, rankings, queries and the prediction's labels, which "
                          "the workflow makes (fix: run `snakemake -c2 --config experiment="
                          f"{experiment_file(args)}` first, then draw)")


def cmd_draw(args: argparse.Namespace) -> int:
    from autograde.ppi.stages import required_section, run_draw
    from autograde.ppi.workflow import draw_paths

    config = load_experiment(args)
    required_section(config)
    _first(config, args, args.prediction)
    paths = draw_paths(config)
    design = args.design_file or paths["design"]
    worklist = args.worklist or str(Path(design).parent / f"worklist-{_next_round(design)}.tsv")
    pilot = args.qrels or (paths["sample"] if args.design_file is None else None)
    Path(design).parent.mkdir(parents=True, exist_ok=True)
    record = run_draw(config, args.design, args.budget, args.seed, design, worklist, args.prediction,
                      args.uniform_share, args.importance_depth, pilot)
    print(json.dumps({**record, "design_file": design, "worklist": worklist}, indent=2, sort_keys=True))
    return 0


def _next_round(design: str) -> int:
    if not Path(design).is_file():
        return 1
    first = Path(design).open(encoding="utf-8").readline()
    return first.count('"round":') + 1


def cmd_estimate(args: argparse.Namespace) -> int:
    from autograde.core.layout import Layout
    from autograde.ppi.stages import draw_outputs, estimates_text, required_section, run_estimates
    from autograde.ppi.workflow import draw_paths, estimate_outputs

    config = load_experiment(args)
    h = required_section(config)
    lay = Layout.of(config.results_dir)
    paths = draw_paths(config)
    own = args.design_file is None and args.qrels is None and Path(paths["design"]).is_file()
    design = paths["design"] if own else (args.design_file or h.design)
    qrels = paths["sample"] if own else (args.qrels or h.qrels)
    outputs = draw_outputs(config) if own else estimate_outputs(config)
    for f in outputs.values():
        Path(f).parent.mkdir(parents=True, exist_ok=True)
    summary = run_estimates(config, lay.pool, lay.ingest("rankings"), outputs, qrels, design)
    print(f"estimates from {summary['sample']['judged']} judgments ({qrels}; design {design or 'simple random'})\n")
    print(estimates_text(config, outputs, summary))
    print(f"\ntables: {outputs['summary']} and per prediction estimates.tsv, differences.tsv beside it")
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    from autograde.ppi.stages import required_section, run_answer
    from autograde.ppi.workflow import draw_paths

    config = load_experiment(args)
    required_section(config)
    paths = draw_paths(config)
    out = args.out or paths["sample"]
    design = args.design_file or paths["design"]
    n = run_answer(config, getattr(args, "from"), out, design)
    print(json.dumps({"judgments": n, "out": out}))
    return 0


def register(subparsers: Any) -> None:
    """Add ``sample`` with its subcommands to the ``autograde`` CLI."""
    p = subparsers.add_parser("sample", help="judging worklists and estimates with intervals from a human sample",
                              description="Which passages to judge next (designs with known inclusion "
                              "probabilities, in rounds) and prediction-powered estimates with intervals for every "
                              "system and measure from the judged sample.")
    sub = p.add_subparsers(dest="sample_command", required=True)

    d = add_command(sub, "draw", "draw the next round of the experiment's judging design and write its worklist")
    add_config_option(d)
    d.add_argument("--budget", type=float, required=True, help="expected number of passages to judge in this round")
    d.add_argument("--design", choices=DESIGN_KINDS, default="simple_random",
                   help="how inclusion probabilities are chosen (default: simple_random)")
    d.add_argument("--seed", type=int, default=0, help="seed of the draw: the same seed and round draw the same "
                   "passages; each round's stream is independent of the others' (default: 0)")
    d.add_argument("--prediction", default=None, help="the prediction of human_sample.predictions that stratifies "
                   "or targets the draw (default: the first)")
    d.add_argument("--uniform-share", type=float, default=0.2, help="share of the budget spread uniformly in the "
                   "stratified and active designs, so every passage can be drawn (default: 0.2)")
    d.add_argument("--importance-depth", type=int, default=10, help="rank depth of each system that makes a passage "
                   "count in the stratified and active designs (default: 10)")
    d.add_argument("--design-file", default=None, help="the design file to create or extend (default: "
                   "<results_dir>/human_sample/draw/design.tsv)")
    d.add_argument("--worklist", default=None, help="where the round's worklist goes (default: beside the design "
                   "file, worklist-<round>.tsv)")
    d.add_argument("--qrels", default=None, help="the judgments so far, the pilot of stratified and active designs "
                   "(default: the draw's sample.qrels beside the default design file)")
    d.set_defaults(func=cmd_draw)

    e = add_command(sub, "estimate", "estimates with intervals for every system and measure; prints the leaderboards")
    add_config_option(e)
    e.add_argument("--qrels", default=None, help="the judged sample (default: the experiment's own draw's, else "
                   "human_sample.qrels)")
    e.add_argument("--design-file", default=None, help="its design file (default: the experiment's own draw, else "
                   "human_sample.design)")
    e.set_defaults(func=cmd_estimate)

    a = add_command(sub, "answer", "judge every drawn passage from a qrels file (demos and simulations; unjudged "
                    "there: grade 0)")
    add_config_option(a)
    a.add_argument("--from", required=True, help="a qrels file that judges the pool (for example the full human qrels)")
    a.add_argument("--out", default=None, help="the sample's qrels file, extended (default: the draw's sample.qrels, "
                   "<results_dir>/human_sample/draw/sample.qrels)")
    a.add_argument("--design-file", default=None, help="the design file (default: the experiment's own draw)")
    a.set_defaults(func=cmd_answer)
