"""Looking at and combining test banks: stats, diff (by query) and merge.

>>> from autograde.io.banks.model import Bank, BankItem
>>> a = Bank([BankItem("q/1", "q", "question", "When did rock begin?"), BankItem("q/2", "q", "question", "Who?")])
>>> b = Bank([BankItem("q/3", "q", "question", "When exactly did rock begin?"), BankItem("q/4", "q", "question", "Where?")])
>>> d = diff_banks(a, b)["queries"]["q"]
>>> [c["old"] for c in d["changed"]], [x["text"] for x in d["removed"]], [x["text"] for x in d["added"]]
(['When did rock begin?'], ['Who?'], ['Where?'])
"""

from __future__ import annotations

import json
import statistics
from difflib import SequenceMatcher
from typing import Any

from autograde.banks.parse import normalize_item
from autograde.io.banks.model import Bank, BankItem


def _dist(values: list[int]) -> dict[str, float]:
    if not values:
        return {"min": 0, "p25": 0, "median": 0, "mean": 0, "p75": 0, "max": 0}
    qs = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {"min": min(values), "p25": qs[0], "median": statistics.median(values),
            "mean": round(statistics.fmean(values), 2), "p75": qs[2], "max": max(values)}


def bank_stats(bank: Bank, queries: dict[str, str] | None = None) -> dict[str, Any]:
    """Items per query, kinds, gold answers, near-duplicates (same text after normalization), queries without
    items (of ``queries``, and query lines left empty), and the length distribution (words, characters)."""
    by_q = bank.by_query()
    dupes = []
    for qid, items in by_q.items():
        seen: dict[str, BankItem] = {}
        for it in items:
            key = normalize_item(it.text)
            if key in seen:
                dupes.append({"query_id": qid, "item_id": it.item_id, "text": it.text,
                              "same_as": seen[key].item_id, "same_as_text": seen[key].text})
            else:
                seen[key] = it
    empty = sorted(q for q in bank.headers if q not in by_q)
    if queries is not None:
        empty = sorted(set(empty) | (set(queries) - set(by_q)))
    kinds: dict[str, int] = {}
    for it in bank.items:
        kinds[it.kind] = kinds.get(it.kind, 0) + 1
    importance: dict[str, int] = {}
    for it in bank.items:
        if it.kind == "nugget" or (it.info or {}).get("importance") is not None:
            key = str((it.info or {}).get("importance") or "unset")
            importance[key] = importance.get(key, 0) + 1
    return {
        "queries": len(by_q), "items": len(bank.items), "kinds": kinds, "importance": importance,
        "with_gold_answers": sum(1 for it in bank.items if it.gold_answers),
        "items_per_query": _dist([len(v) for v in by_q.values()]),
        "per_query": {q: len(v) for q, v in by_q.items()},
        "words_per_item": _dist([len(it.text.split()) for it in bank.items]),
        "chars_per_item": _dist([len(it.text) for it in bank.items]),
        "near_duplicates": dupes,
        "queries_without_items": empty,
        "unknown_queries": sorted(set(by_q) - set(queries)) if queries is not None else [],
    }


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """A human summary of :func:`bank_stats`."""
    ipq, wpi, cpi = stats["items_per_query"], stats["words_per_item"], stats["chars_per_item"]
    kinds = ", ".join(f"{n} {k}s" for k, n in sorted(stats["kinds"].items())) or "no items"
    out = [f"{stats['items']} items ({kinds}; {stats['with_gold_answers']} with gold answers) for "
           f"{stats['queries']} queries",
           f"items per query: min {ipq['min']}, median {ipq['median']}, mean {ipq['mean']}, max {ipq['max']}",
           f"words per item: min {wpi['min']}, p25 {wpi['p25']}, median {wpi['median']}, p75 {wpi['p75']}, "
           f"max {wpi['max']}",
           f"characters per item: min {cpi['min']}, median {cpi['median']}, max {cpi['max']}"]
    if stats.get("importance"):
        imp = stats["importance"]
        out.append("importance: " + ", ".join(f"{imp[k]} {k}" for k in ("vital", "okay", "unset") if k in imp)
                   + "".join(f", {n} {k!r} (not vital/okay)" for k, n in sorted(imp.items())
                             if k not in ("vital", "okay", "unset")))
    if stats["near_duplicates"]:
        out.append(f"near-duplicates (same text after normalization): {len(stats['near_duplicates'])}")
        out.extend(f"  {d['query_id']}: {d['text']!r} ~ {d['same_as_text']!r}" for d in stats["near_duplicates"][:20])
    if stats["queries_without_items"]:
        q = stats["queries_without_items"]
        out.append(f"queries without items: {len(q)}: {', '.join(q[:20])}{' ...' if len(q) > 20 else ''}")
    if stats["unknown_queries"]:
        out.append(f"queries not in the queries file: {', '.join(stats['unknown_queries'][:20])}")
    return out


def set_importance(bank: Bank, labels: dict[str, str | None]) -> tuple[Bank, list[str], list[str]]:
    """A copy of ``bank`` with ``info.importance`` set (or, for None, removed) on the items named in ``labels``
    (item id -> vital / okay / None); returns it, the ids of ``labels`` that are not in the bank, and the ids whose
    importance it changed (an item that has the label already is left as it is and not counted).

    >>> from autograde.io.banks.model import BankItem
    >>> b = Bank([BankItem("q/1", "q", "nugget", "A", info={"importance": "vital"}), BankItem("q/2", "q", "nugget", "B")])
    >>> _, unknown, changed = set_importance(b, {"q/1": "vital", "q/2": "okay", "q/9": "okay"})
    >>> unknown, changed
    (['q/9'], ['q/2'])
    """
    out = Bank(list(bank.items), dict(bank.headers), dict(bank.lines))
    known = {it.item_id for it in bank.items}
    changed = []
    for k, it in enumerate(out.items):
        if it.item_id not in labels or (it.info or {}).get("importance") == labels[it.item_id]:
            continue
        info = {key: v for key, v in (it.info or {}).items() if key != "importance"}
        if labels[it.item_id] is not None:
            info["importance"] = labels[it.item_id]
        out.items[k] = BankItem(it.item_id, it.query_id, it.kind, it.text, it.gold_answers, it.facet_id, info or None)
        changed.append(it.item_id)
    return out, sorted(set(labels) - known), changed


def _item(it: BankItem) -> dict[str, Any]:
    out: dict[str, Any] = {"item_id": it.item_id, "kind": it.kind, "text": it.text}
    if it.gold_answers:
        out["gold_answers"] = list(it.gold_answers)
    return out


def _info_changes(a: BankItem, b: BankItem) -> dict[str, list[Any]]:
    """``info`` keys whose value differs between two versions of an item: key -> [old, new] (None: absent)."""
    ia, ib = a.info or {}, b.info or {}
    return {k: [ia.get(k), ib.get(k)] for k in dict.fromkeys([*ia, *ib]) if ia.get(k) != ib.get(k)}


def _shown(value: Any) -> str:
    return "(none)" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def diff_banks(a: Bank, b: Bank, query: str | None = None, similarity: float = 0.6) -> dict[str, Any]:
    """Added / removed / changed items between bank ``a`` (old) and ``b`` (new), by query.

    Items are matched by id (= the query and the text). An item of ``a`` missing from ``b`` is *changed* when ``b``
    has a new item of the same query whose text is at least ``similarity`` alike (difflib ratio, best match first),
    else *removed*; other new items are *added*. Same text with another kind, other gold answers or other ``info``
    (a nugget's importance, say) is changed too; ``info`` of such a change maps each differing key to [old, new].
    """
    qa, qb = a.by_query(), b.by_query()
    qids = [q for q in dict.fromkeys([*qa, *qb]) if query is None or q == query]
    out: dict[str, Any] = {"only_in_a": [q for q in qids if q not in qb], "only_in_b": [q for q in qids if q not in qa],
                           "queries": {}}
    totals = {"added": 0, "removed": 0, "changed": 0, "unchanged": 0}
    for q in qids:
        ia, ib = qa.get(q, []), qb.get(q, [])
        ids_a, ids_b = {i.item_id: i for i in ia}, {i.item_id: i for i in ib}
        removed = [i for i in ia if i.item_id not in ids_b]
        added = [i for i in ib if i.item_id not in ids_a]
        changed: list[dict[str, Any]] = []
        for i in ia:
            j = ids_b.get(i.item_id)
            if j is None:
                continue
            info = _info_changes(i, j)
            if j.kind != i.kind or j.gold_answers != i.gold_answers or info:
                changed.append({"old_id": i.item_id, "new_id": j.item_id, "old": i.text, "new": j.text,
                                "what": "kind or gold answers" if j.kind != i.kind or j.gold_answers != i.gold_answers
                                else "info", "old_gold": list(i.gold_answers), "new_gold": list(j.gold_answers),
                                "old_kind": i.kind, "new_kind": j.kind, "info": info})
        pairs = sorted(((SequenceMatcher(None, normalize_item(r.text), normalize_item(n.text)).ratio(), k, m)
                        for k, r in enumerate(removed) for m, n in enumerate(added)), reverse=True)
        used_r: set[int] = set()
        used_a: set[int] = set()
        for ratio, k, m in pairs:
            if ratio < similarity or k in used_r or m in used_a:
                continue
            used_r.add(k)
            used_a.add(m)
            changed.append({"old_id": removed[k].item_id, "new_id": added[m].item_id, "old": removed[k].text,
                            "new": added[m].text, "what": "text", "similarity": round(ratio, 3)})
        entry: dict[str, Any] = {
            "added": [_item(n) for m, n in enumerate(added) if m not in used_a],
            "removed": [_item(r) for k, r in enumerate(removed) if k not in used_r],
            "changed": changed,
            "unchanged": sum(1 for i in ia if i.item_id in ids_b) - sum(1 for c in changed if c["what"] != "text")}
        for key in ("added", "removed", "changed"):
            totals[key] += len(entry[key])
        totals["unchanged"] += entry["unchanged"]
        if entry["added"] or entry["removed"] or entry["changed"]:
            out["queries"][q] = entry
    out["totals"] = totals
    return out


def diff_lines(diff: dict[str, Any]) -> list[str]:
    """The diff as text: one block per changed query, ``+`` added, ``-`` removed, ``~`` changed."""
    t = diff["totals"]
    out = [f"{t['added']} added, {t['removed']} removed, {t['changed']} changed, {t['unchanged']} unchanged items "
           f"in {len(diff['queries'])} queries"]
    if diff["only_in_a"]:
        out.append(f"queries only in the first bank: {', '.join(diff['only_in_a'])}")
    if diff["only_in_b"]:
        out.append(f"queries only in the second bank: {', '.join(diff['only_in_b'])}")
    for q, e in diff["queries"].items():
        out.append(f"query {q}: {len(e['added'])} added, {len(e['removed'])} removed, {len(e['changed'])} changed")
        out.extend(f"  - {r['item_id']}  {r['text']}" for r in e["removed"])
        out.extend(f"  + {n['item_id']}  {n['text']}" for n in e["added"])
        for c in e["changed"]:
            if c["what"] == "text":
                out.append(f"  ~ {c['old_id']} -> {c['new_id']}  {c['old']!r} -> {c['new']!r}")
            else:
                parts = [f"{c['old_kind']} {c['old_gold']} -> {c['new_kind']} {c['new_gold']}"] \
                    if c["what"] != "info" else []
                parts += [f"{k} {_shown(old)} -> {_shown(new)}" for k, (old, new) in c.get("info", {}).items()]
                out.append(f"  ~ {c['old_id']}  {c['old']!r}: {'; '.join(parts)}")
    return out


def merge_banks(banks: list[tuple[str, Bank]]) -> tuple[Bank, list[str]]:
    """The union of banks, query by query (order: first bank's queries and items, then what later ones add).

    An item already present (same id) is not added again; its gold answers are joined. Query line fields come
    from the first bank that has the query. Returns the bank and what was joined or skipped, one line each.
    """
    out = Bank()
    notes: list[str] = []
    index: dict[str, int] = {}
    for name, bank in banks:
        for qid, header in bank.headers.items():
            out.headers.setdefault(qid, dict(header))
        for it in bank.items:
            out.headers.setdefault(it.query_id, {"query_id": it.query_id, "items": None})
            k = index.get(it.item_id)
            if k is None:
                index[it.item_id] = len(out.items)
                out.items.append(it)
                continue
            old = out.items[k]
            gold = tuple(dict.fromkeys([*old.gold_answers, *it.gold_answers]))
            if gold != old.gold_answers:
                out.items[k] = BankItem(old.item_id, old.query_id, old.kind, old.text, gold, old.facet_id, old.info)
                notes.append(f"{name}: {it.item_id}: gold answers joined ({len(gold) - len(old.gold_answers)} added)")
            else:
                notes.append(f"{name}: {it.item_id}: already in the merged bank, skipped")
            if it.kind != old.kind:
                notes.append(f"{name}: {it.item_id}: kept kind {old.kind} (this bank says {it.kind})")
    order = {q: i for i, q in enumerate(out.headers)}
    out.items.sort(key=lambda i: order[i.query_id])  # stable: items keep their order within a query
    return out, notes
