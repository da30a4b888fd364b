"""``PlainChoices``: the pile's retire and restore forms take their member hashes as they are, and show and
check exactly what the same forms did with Django's normalized lists (docs/benchmarks.md, "Session of
2026-12-04, eighth")."""

from __future__ import annotations

import pytest
from django import forms

from review.piles.forms import (
    FACT_GONE,
    MEMBER_NOT_IN_A_GROUP,
    MEMBER_NOT_ON_ENTITY,
    MEMBERS_REQUIRED,
    RESTORE_NOT_RESTORABLE,
    MergeForm,
    RestoreManyForm,
    RetireForm,
    SplitForm,
)
from review.web.forms import PlainChoices

HASHES = [f"{i:064x}" for i in range(1, 241)] + ["h<&\"'>"]
LIVE = HASHES[:-1]  # the retire form's live lessons; no test here selects them all


class _ListRetire(RetireForm):
    """The retire form as it was: its member choices set as a list (Django normalizes it)."""

    def __init__(self, *args, hashes: list[str], **kwargs):
        super().__init__(*args, hashes=hashes, **kwargs)
        self.fields["members"].choices = [(h, h) for h in hashes]


class _ListRestore(RestoreManyForm):
    def __init__(self, *args, hashes: list[str], **kwargs):
        super().__init__(*args, hashes=hashes, **kwargs)
        self.fields["lessons"].choices = [(h, h) for h in hashes]


def _bound(data: dict) -> dict:
    return {"reason": "duplicate", "reason_code": "", "pile_version": "v1", "seen_seq": "3", **data}


@pytest.mark.parametrize(
    ("plain", "listed", "name", "extra"),
    [(RetireForm, _ListRetire, "members", {"live": LIVE}), (RestoreManyForm, _ListRestore, "lessons", {})],
)
def test_the_forms_show_the_same_html_as_with_listed_choices(plain, listed, name, extra):
    initial = {name: [HASHES[3], HASHES[-1]], "pile_version": "v1", "seen_seq": 3}
    new = plain(hashes=HASHES, initial=initial, **extra)
    old = listed(hashes=HASHES, initial=initial, **extra)
    assert isinstance(new.fields[name].choices, PlainChoices)
    assert not isinstance(old.fields[name].choices, PlainChoices)
    assert str(new) == str(old)
    assert str(new[name]) == str(old[name])
    assert str(new[name]).count('type="checkbox"') == 241
    assert "h&lt;&amp;&quot;&#x27;&gt;" in str(new[name])


@pytest.mark.parametrize(
    ("posted", "errors"),
    [
        ([HASHES[0], HASHES[240]], {}),
        ([HASHES[-1]], {}),
        ([HASHES[0], "f" * 64], {"members": [MEMBER_NOT_ON_ENTITY]}),
        ([], {"members": [MEMBERS_REQUIRED]}),
    ],
)
def test_the_retire_form_checks_the_same(posted, errors):
    new = RetireForm(_bound({"members": posted}), hashes=HASHES, live=LIVE)
    old = _ListRetire(_bound({"members": posted}), hashes=HASHES, live=LIVE)
    assert new.is_valid() is old.is_valid() is (not errors)
    assert new.errors == old.errors == errors
    if not errors:
        assert new.cleaned_data["members"] == old.cleaned_data["members"] == posted


def test_the_restore_form_refuses_a_lesson_not_restorable():
    form = RestoreManyForm(_bound({"lessons": ["0" * 64]}), hashes=HASHES[:2])
    assert not form.is_valid()
    assert form.errors == {"lessons": [RESTORE_NOT_RESTORABLE]}


def test_plain_choices_behave_as_their_list():
    pairs = [("a", "A"), ("b", "B")]
    choices = PlainChoices(pairs)
    assert list(choices) == pairs
    assert choices == pairs
    assert len(choices) == 2
    assert choices[1] == ("b", "B")
    assert bool(choices) is True
    assert bool(PlainChoices([])) is False
    field = forms.ChoiceField(choices=choices)
    assert field.choices is choices
    assert field.widget.choices is choices
    assert field.clean("b") == "b"


@pytest.mark.parametrize(
    "pair",
    [("a", ("b", "c")), ("a",), ("a", "b", "c"), ("a", 1), (None, "a"), ["a", "b"]],
)
def test_plain_choices_refuse_what_django_would_normalize(pair):
    with pytest.raises(TypeError, match="PlainChoices takes \\(value, label\\) pairs of strings, not "):
        PlainChoices([("x", "X"), pair])


FACTS = [(f"{i:064x}", f'fact {i} <{i}> & "its" rules') for i in range(1, 120)]


class _ListMerge(MergeForm):
    def __init__(self, *args, facts, **kwargs):
        super().__init__(*args, facts=facts, **kwargs)
        self.fields["fact"].choices = self.fields["other"].choices = [("", "Choose a fact"), *facts]


class _ListSplit(SplitForm):
    def __init__(self, *args, members, **kwargs):
        super().__init__(*args, members=members, **kwargs)
        self.fields["member"].choices = [("", "Choose a rule"), *members]


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (None, None),
        ({"merge-fact": FACTS[0][0], "merge-other": FACTS[5][0], "merge-reason": "one"}, {}),
        ({"merge-fact": FACTS[0][0], "merge-other": "0" * 64, "merge-reason": "one"}, {"other": [FACT_GONE]}),
    ],
)
def test_the_merge_form_shows_and_checks_the_same(data, errors):
    initial = {"fact": FACTS[3][0]}
    new, old = MergeForm(data, facts=FACTS, initial=initial), _ListMerge(data, facts=FACTS, initial=initial)
    assert isinstance(new.fields["fact"].choices, PlainChoices)
    assert str(new) == str(old)
    assert str(new).count("<option") == 2 * 120
    if data is not None:
        assert new.is_valid() is old.is_valid() is (not errors)
        assert new.errors == old.errors == errors


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        (None, None),
        ({"split-member": FACTS[7][0], "split-reason": "apart"}, {}),
        ({"split-member": "f" * 64, "split-reason": "apart"}, {"member": [MEMBER_NOT_IN_A_GROUP]}),
    ],
)
def test_the_split_form_shows_and_checks_the_same(data, errors):
    new, old = SplitForm(data, members=FACTS), _ListSplit(data, members=FACTS)
    assert isinstance(new.fields["member"].choices, PlainChoices)
    assert str(new) == str(old)
    if data is not None:
        assert new.is_valid() is old.is_valid() is (not errors)
        assert new.errors == old.errors == errors


def test_plain_choices_take_safe_strings():
    from django.utils.safestring import mark_safe

    assert list(PlainChoices([("a", mark_safe("<b>A</b>"))])) == [("a", "<b>A</b>")]
