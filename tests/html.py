"""A tiny HTML reader for page tests (stdlib only): find elements by tag, class or id and read their text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list = field(default_factory=list)  # Element or str

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self):
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs) -> list[Element]:
        found = []
        for el in self.iter():
            if tag and el.tag != tag:
                continue
            if cls and cls not in el.classes:
                continue
            if any(el.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            found.append(el)
        return found

    def find(self, tag: str | None = None, cls: str | None = None, **attrs) -> Element | None:
        found = self.find_all(tag, cls, **attrs)
        return found[0] if found else None

    @property
    def text(self) -> str:
        parts = []
        for child in self.children:
            if isinstance(child, str):
                parts.append(child)
            elif child.tag != "wbr":  # a line-break opportunity, not a space
                parts.append(" " + child.text + " ")
        return re.sub(r"\s+", " ", "".join(parts)).strip()


INLINE = {"a", "abbr", "b", "code", "em", "i", "mark", "span", "strong", "time", "wbr"}


def inline_text(el: Element) -> str:
    """The text of ``el`` as a reader sees it: inline elements (links, spans) add no space around them."""

    def walk(node: Element) -> str:
        parts = []
        for child in node.children:
            if isinstance(child, str):
                parts.append(child)
            elif child.tag in INLINE:
                parts.append(walk(child))
            else:
                parts.append(" " + walk(child) + " ")
        return "".join(parts)

    return re.sub(r"\s+", " ", walk(el)).strip()


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        el = Element(tag, {k: (v if v is not None else "") for k, v in attrs})
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Element(tag, {k: (v if v is not None else "") for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(content: bytes | str) -> Element:
    builder = _Builder()
    builder.feed(content.decode() if isinstance(content, bytes) else content)
    builder.close()
    return builder.root


def table_rows(root: Element, cls: str) -> list[list[str]]:
    """The text of every body cell of the first table with class ``cls``, row by row."""
    table = root.find("table", cls)
    assert table is not None, f"no table.{cls}"
    body = table.find("tbody")
    return [[td.text for td in tr.find_all("td")] for tr in body.find_all("tr")]
