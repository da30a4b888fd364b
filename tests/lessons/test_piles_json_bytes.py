"""``manage.py piles --format json`` writes each pile through orjson (``pile_json_text``): the output must
stay byte for byte what Python's ``json.dumps(indent=2, ensure_ascii=False)`` gave (issue 10; spec:
docs/piles-and-recurrence.md, "JSON output"). Compared on the corpora through the command, and on generated piles with
awkward text (non-ASCII, quotes, backslashes, control characters, lone surrogates), awkward numbers (NaN,
infinities, 1e-05, ints beyond 64 bits) straight through ``write_piles_json``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.piles import Pile, PileMember
from lessons.core.recurrence import COUNT_FIELDS
from lessons.models import Draft, Host
from lessons.selectors.piles import EntityPile, PileLesson, pile_json_text, piles_json, write_piles_json
from lessons.serializers import pile_as_json


def old_encoder(piles: list[EntityPile]) -> str:
    """What the command wrote before orjson: one ``json.dumps`` of the whole document."""
    return json.dumps({"piles": [pile_as_json(p) for p in piles]}, indent=2, ensure_ascii=False)


def written(piles: list[EntityPile]) -> str:
    parts: list[str] = []
    write_piles_json(parts.append, piles)
    return "".join(parts)


@pytest.mark.django_db
def test_the_command_writes_the_bytes_of_one_json_dumps_on_the_corpora(corpora, capsys):
    call_command("piles", "--format", "json")
    out = capsys.readouterr().out
    assert out == json.dumps(piles_json(), indent=2, ensure_ascii=False) + "\n"
    assert len(json.loads(out)["piles"]) == 2


@pytest.mark.django_db
def test_no_piles_is_an_empty_list(capsys):
    call_command("piles", "--format", "json")
    assert capsys.readouterr().out == '{\n  "piles": []\n}\n'


# Any character but a lone surrogate, with the ones JSON escapes or that tempt an encoder to: quotes,
# backslashes, controls, DEL, the line separators JSON allows raw, a BOM, non-ASCII and astral characters.
SPECIAL = '"\\/\x00\x08\x1f\x7f\u2028\u2029\ufeff`é€😀'
AWKWARD_TEXT = st.text(st.one_of(st.characters(), st.sampled_from(SPECIAL)), max_size=40)
# Lone surrogates too (JSON's "\ud800" decodes to one; orjson refuses them, so such a pile is json.dumps').
WITH_SURROGATES = st.text(
    st.one_of(st.characters(exclude_categories=()), st.sampled_from(SPECIAL)), max_size=40
)
COUNTS = st.integers(min_value=0, max_value=2**70)  # beyond 64 bits orjson refuses: json.dumps writes it
CONFIDENCE = st.none() | st.floats() | st.sampled_from([1e-05, 1e-07, 1e16, 1e22, 0.1, -0.0, 5e-324])
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@st.composite
def entity_piles(draw, text=AWKWARD_TEXT) -> EntityPile:
    """A pile as ``iter_piles`` gives it (unsaved host and drafts, members in rule-5 order), its strings
    drawn from ``text``."""
    host = Host(name=draw(text), max_active=draw(st.integers(0, 3)), budget_enabled=True)
    n = draw(st.integers(1, 5))
    rows = []
    for i in range(n):
        text_drawn = draw(st.one_of(text, st.sampled_from(["Keep `to_utc` here", "keep to_utc here now"])))
        counts = draw(st.none() | st.tuples(*[COUNTS] * len(COUNT_FIELDS)))
        rows.append(
            PileLesson(
                hash=f"{i:064x}",
                lesson_id=draw(st.none() | text),
                store=draw(st.none() | text),
                kind=draw(st.sampled_from(["lesson", "consolidation"])),
                text=text_drawn,
                created_at=T0 + timedelta(milliseconds=draw(st.integers(0, 10**12))),
                status="live",
                latest_verdict=draw(st.none() | st.sampled_from(["held", "regressed"]) | text),
                recurrence=dict(zip(COUNT_FIELDS, counts or (0,) * len(COUNT_FIELDS), strict=True)),
            )
        )
    rows.sort(key=lambda r: (int(r.created_at.timestamp() * 1000), r.hash))
    members = tuple(
        PileMember(
            hash=r.hash,
            created_at_ms=int(r.created_at.timestamp() * 1000),
            status="live",
            verdict=r.latest_verdict,
        )
        for r in rows
    )
    drafts = tuple(
        Draft(
            ext_id=draw(text),
            text=draw(text),
            supersedes=draw(st.lists(st.sampled_from([r.hash for r in rows]) | text, max_size=3)),
            gate_ground=draw(st.sampled_from(["pass", "fail"])),
            gate_verify=draw(st.sampled_from(["pass", "fail"])),
            drafted_by=draw(text),
            triggered_by=draw(st.none() | text),
            confidence=draw(CONFIDENCE),
            status=draw(st.sampled_from(["pending", "approved", "rejected"])),
        )
        for _ in range(draw(st.integers(0, 2)))
    )
    pile = Pile(namespace=draw(text), subject=draw(text), max_active=0, members=members)
    return EntityPile(
        host=host, pile=pile, lessons=tuple(rows), drafts=drafts, live_hashes=frozenset(r.hash for r in rows)
    )


def _float_paths(value, path=()):
    """The paths of every float in a JSON value."""
    if isinstance(value, float):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _float_paths(item, (*path, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _float_paths(item, (*path, n))


@settings(max_examples=300, deadline=None)
@given(st.lists(entity_piles(), max_size=4))
def test_written_bytes_are_those_of_json_dumps_for_awkward_piles(piles):
    _assert_the_bytes_of_json_dumps(piles)


@settings(max_examples=100, deadline=None)
@given(st.lists(entity_piles(text=WITH_SURROGATES), max_size=3))
def test_written_bytes_are_those_of_json_dumps_with_lone_surrogates(piles):
    _assert_the_bytes_of_json_dumps(piles)


def _assert_the_bytes_of_json_dumps(piles: list[EntityPile]) -> None:
    assert written(piles) == old_encoder(piles)
    for entity in piles:
        # pile_json_text checks floats only where a pile has them: its drafts' confidence
        shape = pile_as_json(entity)
        assert {p[0::2] for p in _float_paths(shape)} <= {("drafts", "confidence")}
        assert pile_json_text(shape) == json.dumps(shape, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "confidence, written_as",
    [(1e-05, "1e-05"), (float("nan"), "NaN"), (float("inf"), "Infinity"), (0.25, "0.25"), (None, "null")],
)
def test_a_draft_confidence_is_written_as_json_dumps_writes_it(confidence, written_as):
    # orjson writes 1e-05 as 0.00001 and NaN as null: such a pile goes through json.dumps
    shape = {"drafts": [{"confidence": confidence}]}
    assert (
        pile_json_text(shape)
        == f'{{\n  "drafts": [\n    {{\n      "confidence": {written_as}\n    }}\n  ]\n}}'
    )
