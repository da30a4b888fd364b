"""Spies of the tests: how often the code under test called a function."""

from __future__ import annotations


def counted_calls(monkeypatch, owner, name: str) -> list:
    """Count the calls of ``owner.name`` (a module's function or a class's method): the returned list gets
    one item per call, and the call goes through to the original."""
    calls: list = []
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls
