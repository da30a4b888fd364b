"""The one skeleton of a page's write (review/web/decide.py): invalid form, 403, refusal, success."""

from __future__ import annotations

import pytest
from django import forms
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse

from review.services.common import DecisionRefused, NotAllowed, StalePile
from review.web.decide import decide


class ReasonOnly(forms.Form):
    reason = forms.CharField()


def answer(rf, data, act):
    request = rf.post("/x/", data)
    request.user = AnonymousUser()
    seen = []
    response = decide(
        request,
        ReasonOnly(data),
        act=act,
        invalid=lambda form: HttpResponse(f"invalid {sorted(form.errors)}", status=422),
        refused=lambda exc: HttpResponse(f"refused {type(exc).__name__}: {exc}", status=409),
        done=lambda result: seen.append(result) or HttpResponse(f"done {result}"),
    )
    return response, seen


@pytest.mark.django_db
def test_an_invalid_form_never_reaches_the_service(rf):
    calls = []
    response, _ = answer(rf, {}, lambda data: calls.append(data))
    assert (response.status_code, response.content) == (422, b"invalid ['reason']")
    assert calls == []


@pytest.mark.django_db
def test_the_service_result_goes_to_done(rf):
    response, seen = answer(rf, {"reason": "dup"}, lambda data: data["reason"].upper())
    assert (response.status_code, response.content, seen) == (200, b"done DUP", ["DUP"])


@pytest.mark.django_db
def test_not_allowed_is_a_403_page_with_the_services_message(rf):
    def act(data):
        raise NotAllowed("You may not retire lessons.")

    response, seen = answer(rf, {"reason": "dup"}, act)
    assert response.status_code == 403
    assert "You may not retire lessons." in response.content.decode()
    assert seen == []


@pytest.mark.django_db
@pytest.mark.parametrize("exc", [DecisionRefused("Write a reason."), StalePile("v2")])
def test_any_other_refusal_goes_to_the_views_refused(rf, exc):
    def act(data):
        raise exc

    response, seen = answer(rf, {"reason": "dup"}, act)
    assert (response.status_code, response.content.decode()) == (409, f"refused {type(exc).__name__}: {exc}")
    assert seen == []
