"""A link checker for the generated site: every local ``href``/``src`` must name an existing file, and
every ``#fragment`` an existing ``id`` (or ``name``) in its target page.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.html").write_text('<a href="b.html#x">b</a> <a href="#top">top</a> <img src="c.svg"><p id="top">')
>>> _ = (d / "b.html").write_text('<h1 id="y">b</h1>')
>>> broken_links(d)
['a.html: b.html#x (no id "x" in b.html)', 'a.html: c.svg (no such file)']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src") and not (tag == "link" and value.startswith("data:")):
                self.links.append(value)
            elif name in ("id",) or (name == "name" and tag == "a"):
                self.ids.add(value)


def _parse(path: Path) -> _Collector:
    c = _Collector()
    c.feed(path.read_text(encoding="utf-8"))
    return c


def page_links(html: str) -> tuple[list[str], list[str]]:
    """(links, ids) of one page's text: what :func:`broken_links` checks of it (given, the page is not parsed again).

    >>> page_links('<a href="b.html#x" id="top">b</a>')
    (['b.html#x'], ['top'])
    """
    c = _Collector()
    c.feed(html)
    return c.links, sorted(c.ids)


def broken_links(site: str | Path, parsed: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None
                 ) -> list[str]:
    """``"page: link (why)"`` for every broken local link of every ``*.html`` under ``site`` (sorted).

    ``parsed``: (links, ids) of pages already parsed (:func:`page_links`), by path relative to ``site``."""
    root = Path(site).resolve()
    known = dict(parsed or {})
    pages: dict[Path, _Collector] = {}
    for p in root.rglob("*.html"):
        rel = p.relative_to(root).as_posix()
        if rel in known:
            c = _Collector()
            c.links, c.ids = list(known[rel][0]), set(known[rel][1])
            pages[p.resolve()] = c
        else:
            pages[p.resolve()] = _parse(p)
    out = []
    for page, c in sorted(pages.items()):
        rel = page.relative_to(root).as_posix()
        for link in c.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("data:", "javascript:", "mailto:")):
                continue
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if not target.is_relative_to(root):
                out.append(f"{rel}: {link} (outside the site)")
                continue
            if not target.is_file():
                out.append(f"{rel}: {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    out.append(f"{rel}: {link} (no id \"{parts.fragment}\" in {target.relative_to(root).as_posix()})")
    return sorted(out)
