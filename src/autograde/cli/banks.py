"""The `autograde bank` commands: look at, compare, combine, convert and start editing test banks; generate one.

Examples::

    autograde bank stats results/banks/questions.jsonl.gz --queries data/queries.tsv
    autograde bank diff results/banks/questions.jsonl.gz banks/questions.edited.jsonl
    autograde bank merge banks/a.jsonl banks/b.jsonl --out banks/ab.jsonl
    autograde bank import nuggets.jsonl --from nuggetizer --out banks/nuggets.jsonl.gz --queries data/queries.tsv
    autograde bank export banks/questions.edited.jsonl --to tsv --out questions.tsv
    autograde bank init-edit --config config/experiments/my.yaml --bank questions
    autograde bank set-importance banks/nuggets.jsonl --set q1/0f3c...=vital --out banks/nuggets.jsonl
    autograde bank generate --config config/experiments/my.yaml --bank questions

Every file a command reads may be in any supported format (``--from``; ``auto`` detects it): workbench JSONL(.gz),
TQA, nuggetizer (TREC RAG 24), AutoJudge NuggetBank, TSV. Imports and exports print what they dropped and why.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from autograde.cli.common import (
    add_command,
    add_config_option,
    add_shard_options,
    add_threads_option,
    experiment_file,
    load_experiment,
)
from autograde.core.log import logger

FORMAT_CHOICES = ["auto", "workbench", "tqa", "nuggetizer", "autojudge", "tsv"]


def _read(path: str, fmt: str, kind: str = "question", queries: dict[str, str] | None = None,
          queries_source: str = "the queries file", quiet: bool = False, query_prefix: str = "",
          strict: bool = True) -> Any:
    """A bank read like the workflow reads it (``strict``: a malformed bank is refused with every problem), or,
    for the conversion commands, leniently (what cannot be used is dropped and reported)."""
    from autograde.io.banks.formats import import_bank

    bank, report = import_bank(path, fmt, kind=kind, queries=queries, queries_source=queries_source,
                               query_prefix=query_prefix, strict=strict)
    if report.dropped and not quiet:
        for line in report.lines():
            logger.warning("%s", line)
    return bank, report


def _queries(path: str | None) -> dict[str, str] | None:
    if not path:
        return None
    from autograde.io.queries import read_queries

    return read_queries(path)


def _print(lines: list[str]) -> None:
    sys.stdout.write("".join(line + "\n" for line in lines))


def cmd_stats(args: argparse.Namespace) -> int:
    from autograde.banks.tools import bank_stats, stats_lines

    queries = _queries(args.queries)
    bank, report = _read(args.bank, args.from_, args.kind, quiet=True)
    stats = bank_stats(bank, queries)
    stats["dropped_when_read"] = report.reasons()  # e.g. repeated texts, empty items
    if args.json:
        print(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        lines = stats_lines(stats)
        if report.dropped:
            lines += [f"not counted: {n} {reason}" for reason, n in report.reasons().items()]
            lines += [f"  {d.where}: {d.what}" for d in report.dropped[:20]]
        _print(lines)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from autograde.banks.tools import diff_banks, diff_lines

    a, _ = _read(args.a, args.from_, args.kind)
    b, _ = _read(args.b, args.from_, args.kind)
    d = diff_banks(a, b, query=args.query, similarity=args.similarity)
    if args.json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
    else:
        _print(diff_lines(d))
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from autograde.banks.tools import merge_banks
    from autograde.io.banks.formats import export_bank

    banks = [(p, _read(p, args.from_, args.kind)[0]) for p in args.banks]
    merged, notes = merge_banks(banks)
    for n in notes:
        logger.info("%s", n)
    export_bank(merged, args.out, args.to)
    print(json.dumps({"out": args.out, "queries": len(merged.by_query()), "items": len(merged.items),
                      "joined_or_skipped": len(notes)}))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from autograde.io.banks.formats import export_bank

    queries = _queries(args.queries)
    bank, report = _read(args.input, args.from_, args.kind, queries, args.queries or "", quiet=True,
                         query_prefix=args.query_prefix, strict=False)
    export_bank(bank, args.out, "workbench")
    _print(report.lines(examples=args.examples))
    if args.report:
        Path(args.report).write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    if queries is not None:
        lacking = sorted(set(queries) - set(bank.by_query()))
        if lacking:
            print(f"queries without items: {len(lacking)}: {', '.join(lacking[:20])}{' ...' if len(lacking) > 20 else ''}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from autograde.io.banks.formats import export_bank

    bank, _ = _read(args.bank, args.from_, args.kind, strict=False)
    report = export_bank(bank, args.out, args.to)
    _print(report.lines(examples=args.examples))
    return 0


def _importance_labels(args: argparse.Namespace) -> dict[str, str | None]:
    """item id -> importance from --set, --clear and --from-file (a TSV item_id<TAB>importance, or the workflow's
    importance table); a value other than vital / okay is an error naming where it came from."""
    from autograde.core.errors import Problems
    from autograde.grading.nugget_labels import IMPORTANCE_LABELS

    problems = Problems()
    labels: dict[str, str | None] = {}
    fix = "write vital or okay"
    if args.from_file:
        if args.from_file.endswith(".parquet"):
            from autograde.core.tables import read_table

            rows: list[tuple[int | None, str, str]] = [
                (None, str(i), str(v)) for i, v in read_table(args.from_file, ["item_id", "importance"]).itertuples(index=False)]
        else:
            from autograde.core.text import iter_lines

            rows = [(n, line.split("\t")[0], line.split("\t")[1]) for n, line in iter_lines(args.from_file, problems)
                    if line.strip() and not line.startswith("#") and "\t" in line]
        for n, item, value in rows:
            if value.strip() not in IMPORTANCE_LABELS:
                problems.add(args.from_file, n, f"importance {value.strip()!r} of {item}", fix)
            labels[item.strip()] = value.strip()
    for given in args.set or []:
        item, _, value = given.rpartition("=")
        if not item or value not in IMPORTANCE_LABELS:
            problems.add("command line", None, f"--set {given!r} is not ITEM_ID=vital or ITEM_ID=okay", fix)
        labels[item] = value
    labels.update({item: None for item in args.clear or []})
    problems.raise_if_any()
    return labels


def cmd_set_importance(args: argparse.Namespace) -> int:
    """Set (or clear) nuggets' importance in a bank; hand-set importance wins over the importance model."""
    from autograde.banks.tools import set_importance
    from autograde.core.errors import InputError, Problem
    from autograde.io.banks.formats import export_bank

    bank, _ = _read(args.bank, args.from_, args.kind)
    labels = _importance_labels(args)
    if args.only_missing:
        open_ids = {it.item_id for it in bank.items if (it.info or {}).get("importance") is None}
        labels = {k: v for k, v in labels.items() if k in open_ids}
    out, unknown, changed = set_importance(bank, labels)
    if unknown:
        raise InputError([Problem(args.bank, None, f"no item {u} in the bank", "use the item ids of the bank "
                                  "(autograde bank stats --json lists them)") for u in unknown])
    same_file = Path(args.out).exists() and Path(args.out).resolve() == Path(args.bank).resolve()
    written = bool(changed) or not same_file  # an unchanged bank is not rewritten (its time stamp stays)
    if written:
        export_bank(out, args.out, "workbench")
    counts: dict[str, int] = {}
    for it in out.items:
        key = str((it.info or {}).get("importance") or "unset")
        counts[key] = counts.get(key, 0) + 1
    print(json.dumps({"out": args.out, "changed": len(changed), "unchanged": len(labels) - len(changed),
                      "written": written, "importance": counts}, sort_keys=True))
    return 0


def cmd_init_edit(args: argparse.Namespace) -> int:
    """Copy a generated bank to the file humans edit (never overwrites an edited file without --force)."""
    from autograde.config.banks import edited_bank_path, generated_bank_path
    from autograde.core.errors import AutogradeError
    from autograde.io.banks.model import write_bank

    source, target, name = args.source, args.out, args.bank
    if args.config or (name and not (source and target)):
        config = load_experiment(args)
        if not name:
            raise AutogradeError(f"{experiment_file(args)}: name the generated bank with --bank (fix: one of "
                                 f"{', '.join(config.bank_generation) or 'none under bank_generation:'})")
        from autograde.banks.stages import bank_config

        cfg = bank_config(config, name)
        source = source or generated_bank_path(config.results_dir, name)
        target = target or edited_bank_path(name, cfg)
    if not source or not target:
        raise AutogradeError("init-edit needs --config and --bank, or --source and --out")
    if not Path(source).is_file():
        raise AutogradeError(f"{source}: the generated bank does not exist yet (fix: generate it first: "
                             f"snakemake {source} (with grade_with: generated), or autograde bank generate "
                             f"--config CONFIG --bank {name or 'NAME'})")
    if Path(target).exists() and not args.force:
        raise AutogradeError(f"{target}: the edited copy exists already and may hold your edits (fix: edit it, compare "
                             f"with autograde bank diff {source} {target}, or pass --force to start over from the "
                             "generated bank)")
    bank, _ = _read(source, "workbench")
    write_bank(target, bank)  # plain JSONL: one line per query, items in order
    print(f"wrote {target}: {len(bank.items)} items for {len(bank.by_query())} queries, a copy of {source}")
    if name:
        print(f"edit it, then set bank_generation.{name}.grade_with: edited (and edited: {target} if that is not "
              "the default path); a rerun regrades only the queries whose items you changed")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from autograde.banks.stages import bank_config, run_generate_bank, run_generate_shard
    from autograde.core.errors import AutogradeError
    from autograde.pipeline.jobs import require_gpu

    config = load_experiment(args)
    for name in [args.bank] if args.bank else list(config.bank_generation):
        require_gpu(bank_config(config, name), f"bank {name}")
    if args.shard:  # one workflow shard (rule generate_bank runs this in the vLLM environment)
        if not (args.bank and args.out_bank and args.out_failures and args.out_stats):
            raise AutogradeError("--shard needs --bank, --out-bank, --out-failures and --out-stats")
        stats = run_generate_shard(config, args.bank, args.shard, args.out_bank, args.out_failures, args.out_stats,
                                   threads=args.threads, digest=args.digest)
        print(json.dumps(stats, sort_keys=True))
        return 0
    names = [args.bank] if args.bank else list(config.bank_generation)
    if not names:
        raise AutogradeError(f"{experiment_file(args)}: no bank_generation: section (fix: add one, see docs/banks.md)")
    for name in names:
        stats = run_generate_bank(config, name, args.out_dir)
        print(json.dumps({k: v for k, v in stats.items() if k != "shards"}, sort_keys=True))
    return 0


def _common(p: argparse.ArgumentParser, kind: bool = True) -> None:
    p.add_argument("--from", dest="from_", choices=FORMAT_CHOICES, default="auto",
                   help="format of the bank file(s) read (default: detected)")
    if kind:
        p.add_argument("--kind", choices=["question", "nugget"], default="question",
                       help="TSV files: whether the items are questions or nuggets (default: question)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bank`` with its subcommands to the ``autograde`` CLI."""
    p = subparsers.add_parser("bank", help="test banks: stats, diff, merge, import, export, set-importance, init-edit, "
                              "generate",
                              description="Look at, compare, combine, convert and start editing test banks; "
                              "generate one.")
    sub = p.add_subparsers(dest="bank_command", required=True)

    s = add_command(sub, "stats", "items per query, kinds, near-duplicates, queries without items, lengths")
    s.add_argument("bank", help="the bank file (any supported format, see --from)")
    s.add_argument("--queries", help="queries file: also list its queries without items and unknown queries")
    s.add_argument("--json", action="store_true", help="print JSON")
    _common(s)
    s.set_defaults(func=cmd_stats)

    d = add_command(sub, "diff", "added / removed / changed items between two banks, by query",
                    "Added / removed / changed items between two banks, by query. Changed: a new text at least "
                    "--similarity alike, another kind, other gold answers or other info (such as a nugget's "
                    "importance).")
    d.add_argument("a", help="the old bank")
    d.add_argument("b", help="the new bank")
    d.add_argument("--query", help="only this query")
    d.add_argument("--similarity", type=float, default=0.6,
                   help="a removed and an added item of a query at least this alike count as one changed item "
                        "(difflib ratio; default %(default)s)")
    d.add_argument("--json", action="store_true", help="print JSON")
    _common(d)
    d.set_defaults(func=cmd_diff)

    m = add_command(sub, "merge", "union of banks by query (an item present twice is kept once)")
    m.add_argument("banks", nargs="+", help="the bank files to merge (an item in several is kept once, its gold answers joined)")
    m.add_argument("--out", required=True, help="the merged bank")
    m.add_argument("--to", choices=FORMAT_CHOICES[1:], default="workbench", help="output format (default: workbench)")
    _common(m)
    m.set_defaults(func=cmd_merge)

    i = add_command(sub, "import", "read a bank from another format into the workbench format; report drops")
    i.add_argument("input", help="the bank file to import (format: --from)")
    i.add_argument("--out", required=True, help="workbench JSONL (.gz to compress)")
    i.add_argument("--queries", help="queries file: items of other queries are dropped (and reported)")
    i.add_argument("--report", help="also write the report as JSON here")
    i.add_argument("--query-prefix", default="", help="prefix every query id (e.g. tqa2: for TQA, as the workbench does)")
    i.add_argument("--examples", type=int, default=3, help="examples shown per drop reason (default %(default)s)")
    _common(i)
    i.set_defaults(func=cmd_import)

    e = add_command(sub, "export", "write a bank in another format; report what the format cannot hold")
    e.add_argument("bank", help="the bank file to export")
    e.add_argument("--to", choices=FORMAT_CHOICES[1:], required=True, help="output format")
    e.add_argument("--out", required=True, help="output file")
    e.add_argument("--examples", type=int, default=3, help="examples shown per drop reason (default %(default)s)")
    _common(e)
    e.set_defaults(func=cmd_export)

    si = add_command(sub, "set-importance", "set or clear nuggets' importance (vital / okay) in a bank")
    si.add_argument("bank", help="the bank to read")
    si.add_argument("--out", required=True, help="the bank to write (workbench format; may be the same file, which "
                    "is not rewritten when nothing changes)")
    si.add_argument("--set", action="append", metavar="ITEM_ID=IMPORTANCE",
                    help="set one item's importance (vital or okay; repeatable)")
    si.add_argument("--clear", action="append", metavar="ITEM_ID", help="remove one item's importance (repeatable)")
    si.add_argument("--from-file", help="many at once: TSV item_id<TAB>importance, or the workflow's "
                    "results/nuggets/importance.parquet (to keep a model's labels in the bank)")
    si.add_argument("--only-missing", action="store_true",
                    help="leave items that already have an importance as they are (hand edits win)")
    _common(si)
    si.set_defaults(func=cmd_set_importance)

    n = add_command(sub, "init-edit", "copy a generated bank to the file you edit (grade_with: edited)")
    add_config_option(n)
    n.add_argument("--bank", help="the generated bank's name")
    n.add_argument("--source", help="the generated bank (default: <results_dir>/banks/<bank>.jsonl.gz)")
    n.add_argument("--out", help="the edited copy (default: bank_generation.<bank>.edited or banks/<bank>.edited.jsonl)")
    n.add_argument("--force", action="store_true", help="overwrite an existing edited copy")
    n.set_defaults(func=cmd_init_edit)

    g = add_command(sub, "generate", "generate bank(s) of bank_generation: in this process (no Snakemake)")
    add_config_option(g)
    g.add_argument("--bank", help="only this bank (default: every generated bank)")
    g.add_argument("--out-dir", help="write <out-dir>/banks/<bank>.jsonl.gz (default: the config's results_dir)")
    g.add_argument("--out-bank", help="with --shard: the shard's items (JSONL)")
    g.add_argument("--out-failures", help="with --shard: the queries whose generation failed (JSONL)")
    g.add_argument("--out-stats", help="with --shard: counts and timings (JSON)")
    add_shard_options(g, "generated")
    add_threads_option(g)
    g.set_defaults(func=cmd_generate)
