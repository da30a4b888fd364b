"""/admin/ for those who may not use it: the product's pages, not the admin's own sign-in form
(newcomer item: a viewer was shown Django's admin sign-in, which also failed axe's heading rule)."""

from __future__ import annotations

import pytest

from review.admin_site import ADMIN_NOT_ALLOWED


@pytest.mark.parametrize("persona", ["viewer", "reviewer"])
def test_a_signed_in_viewer_or_reviewer_gets_the_not_allowed_page(client, persona, request):
    client.force_login(request.getfixturevalue(persona))
    for path in ("/admin/", "/admin/review/apitoken/", "/admin/login/"):
        response = client.get(path)
        assert response.status_code == 403, path
        page = response.content.decode()
        assert "<h1>Not allowed</h1>" in page
        assert ADMIN_NOT_ALLOWED in page
        assert 'name="password"' not in page


def test_someone_signed_out_is_sent_to_the_products_sign_in_and_back(client, db):
    response = client.get("/admin/review/apitoken/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/admin/review/apitoken/"
    assert client.get("/admin/login/").headers["Location"] == "/accounts/login/?next=/admin/login/"


def test_an_admin_still_gets_the_admin_and_its_sign_in_link_sends_them_on(client, admin_user):
    admin_user.is_staff = True  # as the demo's and production's admins are (docs/production.md)
    admin_user.save()
    client.force_login(admin_user)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/login/").headers["Location"] == "/admin/"
