"""Who a ``drafted_by``/``triggered_by`` label names, compared the way a person reads it (pure, no ORM).

``user:NAME`` names the user NAME (README.md, "Commands"). Comparing raw strings let ``User:priya``,
``Priya``,
fullwidth ``user:ｐｒｉｙａ``, ``user：priya`` or ``pri<zero-width space>ya`` approve a draft priya
triggered (issue 13, fault 3). Here a label and a username are reduced to one key: NFKC, then every
invisible character (format and control characters, whitespace: a Django username holds none) removed,
then case-folded (and NFKC again, since case folding can undo it), and Cyrillic or Greek letters that look
like Latin ones read as those (``_LOOKALIKES``: a lookalike of a name is blocked too). The ``user:`` prefix
is matched on that key, so it is case-insensitive and a fullwidth colon counts. A label with another
prefix (``llm:…``) is compared whole.
"""

from __future__ import annotations

import unicodedata

USER_PREFIX = "user:"
# format (zero-width space and joiners, bidi marks, soft hyphen), controls, spaces and separators
_INVISIBLE = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp"})
# Cyrillic and Greek letters that look like Latin ones (lower case, after case folding), read as the
# Latin letter: "priуa" with a Cyrillic у is a lookalike of priya and must not approve her draft.
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k",
        "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ԁ": "d",
        "ѕ": "s", "ԛ": "q", "ԝ": "w", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k",
        "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w",
    }
)  # fmt: skip


def name_key(text: str) -> str:
    """``text`` reduced for comparison: NFKC, invisible characters removed, case-folded, Cyrillic and
    Greek lookalikes read as Latin letters. ``"Pri\u200bYA"`` -> ``"priya"``."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) not in _INVISIBLE)
    return unicodedata.normalize("NFKC", text.casefold()).translate(_LOOKALIKES)


def principal_key(label: str | None) -> str | None:
    """The key (``name_key``) of the username a label names, or None for an empty label.
    ``"User：Priya"`` -> ``"priya"``; ``"Priya"`` -> ``"priya"``; ``"llm:qwen"`` -> ``"llm:qwen"`` (a bare
    label is compared as it is: a username cannot normally hold ``:``, so it names no user)."""
    if not label:
        return None
    key = name_key(label)
    if key.startswith(USER_PREFIX):
        key = key[len(USER_PREFIX) :]
    return key or None


def label_names(label: str | None, username: str) -> bool:
    """Whether ``label`` names the user ``username`` by any variant of the module docstring (the whole
    label, or what follows its ``user:`` prefix)."""
    if not label:
        return False
    key = name_key(label)
    return name_key(username) in {key, principal_key(label)}
