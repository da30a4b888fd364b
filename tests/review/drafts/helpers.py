"""Reading the draft page's HTML in tests: the kept and dropped words of one member of the coverage matrix."""

from __future__ import annotations

import re

_ARTICLE = re.compile(
    r'<article class="cov-member[^"]*"[^>]*data-testid="member-(?P<short>[0-9a-f]{8})">'
    r"(?P<body>.*?)</article>",
    re.S,
)
_GROUP = re.compile(r'<div class="chips" data-testid="(?P<which>kept|dropped)">(?P<body>.*?)</div>', re.S)
_WORD = re.compile(r'class="chip chip-(?:kept|dropped)(?P<anchor> chip-anchor)?" data-word="(?P<word>[^"]+)"')


def member_words(html: str, short: str) -> dict[str, set[str]]:
    """``{"kept": {...}, "dropped": {...}, "kept_anchors": {...}, "dropped_anchors": {...}}`` of member
    ``short`` (its first 8 hash characters) as the page renders them."""
    for match in _ARTICLE.finditer(html):
        if match.group("short") != short:
            continue
        result: dict[str, set[str]] = {
            "kept": set(),
            "dropped": set(),
            "kept_anchors": set(),
            "dropped_anchors": set(),
        }
        for group in _GROUP.finditer(match.group("body")):
            for word in _WORD.finditer(group.group("body")):
                key = group.group("which") + ("_anchors" if word.group("anchor") else "")
                result[key].add(word.group("word"))
        return result
    raise AssertionError(f"no member {short} on the page")


def member_summary(html: str, short: str) -> str:
    for match in _ARTICLE.finditer(html):
        if match.group("short") == short:
            found = re.search(
                r'<p class="cov-summary" data-testid="summary">(.*?)</p>', match.group("body"), re.S
            )
            return found.group(1) if found else ""
    raise AssertionError(f"no member {short} on the page")
