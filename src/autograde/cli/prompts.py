"""``autograde prompts`` lists the registered prompt classes (grading prompts and
the test-bank generation prompts of Phase 1, ``--kind generation``).

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="autograde")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["prompts", "--kind", "direct"])
>>> args.func(args)  # doctest: +ELLIPSIS
config name ...
FagB@v1 ...
0
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the grading subcommands to the ``autograde`` CLI's subparsers."""
    p = subparsers.add_parser(
        "prompts",
        help="list every registered prompt class (config name, version, kind, item kind, label set)",
        description="List the prompt classes a grader's prompt_class can name. A bare name means its default "
        "version (marked *); Name@version picks one explicitly.",
    )
    p.add_argument("--custom", action="append", default=[], metavar="FILE.yaml",
                   help="also load custom prompts from this YAML file (repeatable)")
    p.add_argument("--kind", choices=["rating", "extraction", "verification", "direct", "generation", "importance",
                                      "assignment"],
                   help="only this kind (generation: the test-bank generation prompts)")
    p.add_argument("--show", metavar="NAME", help="print the template(s) of one prompt class (Name or Name@version)")
    p.set_defaults(func=cmd_prompts)


def cmd_prompts(args: argparse.Namespace) -> int:
    """List (or show) prompt classes; returns the exit status."""
    from autograde.grading.prompts import default_version, get_prompt, list_prompts, load_custom_prompts

    for path in args.custom or []:
        load_custom_prompts(path)
    if getattr(args, "show", None):
        prompt = get_prompt(args.show)
        print(f"# {prompt.config_name} ({prompt.kind}, {prompt.item_kind}; labels: {prompt.label_set_text()})")
        print(f"# source: {prompt.source}{'' if prompt.exact else ' [reconstructed]'}")
        if prompt.kind == "generation":
            print("## template")
            print(prompt.template)
            print("## instruction (fills {instruction})")
            print(prompt.instruction or "")
            print("## repair_template (after an unusable answer)")
            print(prompt.repair_template or "")
            return 0
        print("## question_first")
        print(prompt.template)
        if prompt.passage_first_template is not None:
            print("## passage_first")
            print(prompt.passage_first_template)
        return 0
    rows = [("config name", "version", "kind", "item kind", "labels", "orders", "source")]
    for p in list_prompts():
        if args.kind and p.kind != args.kind:
            continue
        default = "*" if default_version(p.name) == p.version else ""
        orders = "q,p" if p.passage_first_template is not None else "q"
        source = p.source.split(" (")[0] + ("" if p.exact else " [reconstructed]")
        rows.append((p.config_name, p.version + default, p.kind, p.item_kind, p.label_set_text(), orders, source))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    return 0
