"""set_budget and its preview. spec: decisions.md, "Actions" (set_budget); docs/piles-and-recurrence.md rules 3-4."""

from __future__ import annotations

import pytest

from lessons.models import Host
from review.services.budget import (
    BUDGET_NOTHING_GIVEN,
    BUDGET_OUT_OF_RANGE,
    BUDGET_UNCHANGED,
    budget_preview,
    host_set_budget,
)
from review.services.common import NOT_ALLOWED_BUDGET, DecisionRefused, NotAllowed
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NOW, NS

TARGET = "entity:desk.test/invoice_capture"


def acme() -> Host:
    return Host.objects.get(name="acme")


def set_budget(actor, **kwargs):
    kwargs.setdefault("max_active", None)
    kwargs.setdefault("budget_enabled", None)
    kwargs.setdefault("reason", "Room for the new rules")
    return host_set_budget(host=acme(), actor=actor, now=NOW, **kwargs)


def test_an_admin_raises_max_active_and_the_record_tells_before_and_after(pile, admin_user):
    decision = set_budget(admin_user, max_active=5)
    assert (acme().max_active, acme().budget_enabled) == (5, True)
    assert (decision.action, decision.host, decision.namespace, decision.subject) == (
        "set_budget",
        "acme",
        None,
        None,
    )
    assert decision.evidence == {
        "before": {"max_active": 3, "budget_enabled": True},
        "after": {"max_active": 5, "budget_enabled": True},
        "piles_before": 1,
        "piles_after": 0,
    }


def test_disabling_the_budget_keeps_max_active(pile, admin_user):
    decision = set_budget(admin_user, budget_enabled=False)
    assert (acme().max_active, acme().budget_enabled) == (3, False)
    assert (decision.evidence["piles_before"], decision.evidence["piles_after"]) == (1, 0)


def test_the_callers_host_instance_shows_the_new_budget(pile, admin_user):
    host = acme()
    host_set_budget(host=host, actor=admin_user, max_active=9, budget_enabled=None, reason="x")
    assert host.max_active == 9


def test_a_reviewer_may_not_set_a_budget(pile, reviewer):
    with pytest.raises(NotAllowed) as exc:
        set_budget(reviewer, max_active=5)
    assert str(exc.value) == NOT_ALLOWED_BUDGET.format(user="rita")
    assert acme().max_active == 3


@pytest.mark.parametrize("value", [0, 10001, -1, True, "5"])
def test_max_active_out_of_range_is_refused(pile, admin_user, value):
    with pytest.raises(DecisionRefused) as exc:
        set_budget(admin_user, max_active=value)
    assert str(exc.value) == BUDGET_OUT_OF_RANGE.format(value=value)


@pytest.mark.parametrize("value", [1, 10000])
def test_the_bounds_are_accepted(pile, admin_user, value):
    set_budget(admin_user, max_active=value)
    assert acme().max_active == value


def test_nothing_given_is_refused(pile, admin_user):
    with pytest.raises(DecisionRefused) as exc:
        set_budget(admin_user)
    assert str(exc.value) == BUDGET_NOTHING_GIVEN


def test_no_change_is_refused(pile, admin_user):
    with pytest.raises(DecisionRefused) as exc:
        set_budget(admin_user, max_active=3, budget_enabled=True)
    assert str(exc.value) == BUDGET_UNCHANGED.format(host="acme", max_active=3, state="enabled")
    assert (
        str(exc.value) == "Host acme already has max_active 3 with the budget enabled; nothing was written."
    )


def test_preview_of_a_looser_budget_shows_the_pile_disappearing(pile, django_assert_num_queries):
    host = acme()
    with django_assert_num_queries(1):
        preview = budget_preview(host=host, max_active=5, budget_enabled=True)
    assert preview == {"over_budget_now": 1, "over_budget_after": 0, "appear": [], "disappear": [TARGET]}


def test_preview_of_a_tighter_budget_shows_piles_appearing(pile, ingest):
    ingest([numbered_lesson(i, namespace=NS, subject="flight_dates") for i in range(3)])
    preview = budget_preview(host=acme(), max_active=2, budget_enabled=True)
    assert preview == {
        "over_budget_now": 1,
        "over_budget_after": 2,
        "appear": ["entity:desk.test/flight_dates"],
        "disappear": [],
    }


def test_preview_of_enabling_a_disabled_budget(ingest):
    ingest(
        [{"type": "host", "name": "off"}, *[numbered_lesson(i, host="off", namespace="") for i in range(9)]]
    )
    host = Host.objects.get(name="off")
    assert budget_preview(host=host, max_active=8, budget_enabled=True) == {
        "over_budget_now": 0,
        "over_budget_after": 1,
        "appear": ["entity:invoice_capture"],
        "disappear": [],
    }


def test_preview_with_the_budget_off_before_and_after_runs_no_query(ingest, django_assert_num_queries):
    ingest([{"type": "host", "name": "off"}])
    host = Host.objects.get(name="off")
    with django_assert_num_queries(0):
        preview = budget_preview(host=host, max_active=1, budget_enabled=False)
    assert preview == {"over_budget_now": 0, "over_budget_after": 0, "appear": [], "disappear": []}


def test_preview_refuses_an_out_of_range_max_active(pile):
    with pytest.raises(DecisionRefused):
        budget_preview(host=acme(), max_active=0, budget_enabled=True)
