"""The Django admin is no back door around decisions: decisions, acks and lessons are read-only, a host's
budget is read-only there, and a token's raw value is shown once and stored as its SHA-256."""

from __future__ import annotations

import hashlib
import re

import pytest

from lessons.models import Host, Lesson
from review.models import ApiToken, Decision
from review.services.budget import host_set_budget


@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.invalid", "root-pass")
    client.force_login(user)
    return user


@pytest.fixture
def decision(corpora, admin_user):
    host = Host.objects.get(name="adbuy-desk")
    return host_set_budget(host=host, actor=admin_user, max_active=9, budget_enabled=True, reason="one more")


def test_decisions_can_be_viewed_but_not_added_changed_or_deleted(client, staff, decision):
    assert client.get("/admin/review/decision/").status_code == 200
    assert client.get(f"/admin/review/decision/{decision.pk}/change/").status_code == 200
    assert client.get("/admin/review/decision/add/").status_code == 403
    assert (
        client.post(f"/admin/review/decision/{decision.pk}/change/", {"reason": "rewritten"}).status_code
        == 403
    )
    assert client.post(f"/admin/review/decision/{decision.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Decision.objects.get().reason == "one more"


def test_lessons_are_read_only_in_the_admin(client, staff, corpora):
    lesson = Lesson.objects.order_by("id").first()
    assert client.get("/admin/lessons/lesson/").status_code == 200
    assert (
        client.post(f"/admin/lessons/lesson/{lesson.pk}/change/", {"status": "retracted"}).status_code == 403
    )
    assert client.post(f"/admin/lessons/lesson/{lesson.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Lesson.objects.get(pk=lesson.pk).status == lesson.status


def test_a_hosts_budget_cannot_be_changed_in_the_admin(client, staff, corpora):
    host = Host.objects.get(name="adbuy-desk")
    page = client.get(f"/admin/lessons/host/{host.pk}/change/").content.decode()
    assert '<a href="/hosts/adbuy-desk/budget/">Edit the budget of adbuy-desk</a>' in page
    response = client.post(
        f"/admin/lessons/host/{host.pk}/change/",
        {"description": "new words", "max_active": "99", "budget_enabled": ""},
    )
    assert response.status_code == 302
    host.refresh_from_db()
    assert (host.description, host.max_active, host.budget_enabled) == ("new words", 8, True)
    assert Decision.objects.count() == 0


def test_a_token_made_in_the_admin_is_shown_once_and_stored_hashed(client, staff, corpora):
    host = Host.objects.get(name="warehouse-sql")
    response = client.post(
        "/admin/review/apitoken/add/",
        {"name": "warehouse puller", "host": host.pk, "can_read": "on"},
        follow=True,
    )
    assert response.status_code == 200
    (raw,) = re.findall(
        r"Copy it now, it is not shown again: (lpr_[A-Za-z0-9_-]+)", response.content.decode()
    )
    token = ApiToken.objects.get()
    assert (token.name, token.host, token.can_read, token.can_ingest, token.created_by) == (
        "warehouse puller",
        host,
        True,
        False,
        staff,
    )
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    listing = client.get("/admin/review/apitoken/").content.decode()
    assert raw not in listing and token.prefix in listing
    assert client.get("/api/v1/piles", HTTP_AUTHORIZATION=f"Bearer {raw}").json()["piles"][0]["host"] == (
        "warehouse-sql"
    )


def test_a_token_needs_a_scope(client, staff, db):
    response = client.post("/admin/review/apitoken/add/", {"name": "nothing"})
    assert "A token needs at least one scope: ingest, read." in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_the_revoke_action_revokes_and_records_who(client, staff, make_token_admin):
    raw = make_token_admin()
    token = ApiToken.objects.get()
    client.post("/admin/review/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert (token.revoked, token.revoked_by, token.revoked_at is not None) == (True, staff, True)
    assert client.get("/api/v1/piles", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_ticking_revoked_on_the_token_page_records_who_and_when(client, staff, make_token_admin):
    from django.utils import timezone

    raw = make_token_admin()
    token = ApiToken.objects.get()
    before = timezone.now()
    response = client.post(f"/admin/review/apitoken/{token.pk}/change/", {"name": "x", "revoked": "on"})
    assert response.status_code == 302
    token.refresh_from_db()
    assert (token.revoked, token.revoked_by) == (True, staff)
    assert before <= token.revoked_at <= timezone.now()
    assert client.get("/api/v1/piles", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_a_revoked_token_cannot_be_unrevoked_on_its_page(client, staff, make_token_admin):
    """Issue 21, fault 9: unticking "revoked" once gave the token back its 200s."""
    raw = make_token_admin()
    token = ApiToken.objects.get()
    client.post("/admin/review/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]})
    first = ApiToken.objects.get()
    page = client.get(f"/admin/review/apitoken/{token.pk}/change/").content.decode()
    assert 'name="revoked"' not in page  # read-only: no box to untick
    response = client.post(f"/admin/review/apitoken/{token.pk}/change/", {"name": "renamed"})
    assert response.status_code == 302
    token.refresh_from_db()
    assert (token.name, token.revoked, token.revoked_at, token.revoked_by) == (
        "renamed",
        True,
        first.revoked_at,
        staff,
    )
    assert client.get("/api/v1/piles", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_a_page_loaded_before_a_revocation_does_not_undo_it(client, staff, make_token_admin):
    """The form of a live token, saved after someone else revoked it, writes its name only."""
    from review.services.tokens import token_revoke

    raw = make_token_admin()
    token = ApiToken.objects.get()
    assert 'name="revoked"' in client.get(f"/admin/review/apitoken/{token.pk}/change/").content.decode()
    token_revoke(token=token, actor=None)
    response = client.post(f"/admin/review/apitoken/{token.pk}/change/", {"name": "renamed"})
    assert response.status_code == 302
    token.refresh_from_db()
    assert (token.name, token.revoked, token.revoked_by) == ("renamed", True, None)
    assert client.get("/api/v1/piles", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


@pytest.fixture
def make_token_admin(db):
    from review.services.tokens import token_create

    def make():
        return token_create(name="x", host=None, can_ingest=False, can_read=True)[1]

    return make


def test_the_token_admin_takes_the_manage_tokens_permission_besides_the_models(client, django_user_model):
    """Issue 23, item 7: ``review.manage_tokens`` is checked, not only granted."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("tok", password="tok-pass", is_staff=True)
    model_perms = Permission.objects.filter(
        content_type__app_label="review", codename__in=["view_apitoken", "add_apitoken", "change_apitoken"]
    )
    user.user_permissions.add(*model_perms)
    client.force_login(user)
    assert client.get("/admin/review/apitoken/").status_code == 403
    assert client.get("/admin/review/apitoken/add/").status_code == 403
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="review", codename="manage_tokens")
    )
    user = django_user_model.objects.get(pk=user.pk)  # the permission cache afresh
    client.force_login(user)
    assert client.get("/admin/review/apitoken/").status_code == 200
    assert client.get("/admin/review/apitoken/add/").status_code == 200
