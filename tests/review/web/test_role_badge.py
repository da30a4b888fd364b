"""The top bar names the signed-in user's role, and says "none" for a user in no group."""

import pytest
from django.contrib.auth.models import User


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fixture", "role"),
    [("viewer", "viewer"), ("reviewer", "reviewer"), ("admin_user", "admin"), (None, "none")],
)
def test_the_role_badge_names_the_strongest_role(client, request, fixture, role):
    user = request.getfixturevalue(fixture) if fixture else User.objects.create_user("nobody", password="x")
    client.force_login(user)
    html = client.get("/hosts/").content.decode()
    assert f'<span class="role role-{role}">{role}</span>' in html
