"""The admin role manages users and their three roles, nothing more (issue 13, fault 4).

An admin-role user (staff, not superuser) edits users' details and roles in /admin/auth/user/, but can never
make anyone superuser or staff, grant raw permissions, offer a group other than the three roles, or edit,
give a new password to or delete a superuser or another admin (issue 21). The staff flag follows the admin
role. A superuser keeps Django's full user admin.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def admin_client(client, admin_user):
    admin_user.is_staff = True
    admin_user.save(update_fields=["is_staff"])
    client.force_login(admin_user)
    return client


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.invalid", "root-pass")


def _group(name: str):
    from django.contrib.auth.models import Group

    return Group.objects.get(name=name)


def _change(client, user, **fields):
    data = {"username": user.username, "first_name": "", "last_name": "", "email": "", "is_active": "on"}
    data.update(fields)
    return client.post(f"/admin/auth/user/{user.pk}/change/", data)


def _fields(html: str) -> set[str]:
    import re

    return set(re.findall(r'name="([a-z_]+)"', html))


def test_the_change_form_offers_no_superuser_staff_or_permissions(admin_client, reviewer):
    html = admin_client.get(f"/admin/auth/user/{reviewer.pk}/change/").content.decode()
    fields = _fields(html)
    assert {"username", "groups", "is_active"} <= fields
    assert fields & {"is_superuser", "is_staff", "user_permissions"} == set()


def test_a_posted_superuser_staff_or_permission_is_ignored(admin_client, reviewer):
    from django.contrib.auth.models import Permission

    perm = Permission.objects.get(codename="delete_user")
    response = _change(
        admin_client,
        reviewer,
        groups=[_group("reviewer").pk],
        is_superuser="on",
        is_staff="on",
        user_permissions=[perm.pk],
    )
    reviewer.refresh_from_db()
    assert response.status_code == 302
    assert (reviewer.is_superuser, reviewer.is_staff, list(reviewer.user_permissions.all())) == (
        False,
        False,
        [],
    )


def test_the_admin_role_cannot_make_itself_superuser(admin_client, admin_user):
    _change(admin_client, admin_user, groups=[_group("admin").pk], is_superuser="on")
    admin_user.refresh_from_db()
    assert (admin_user.is_superuser, admin_user.is_staff) == (False, True)


def test_roles_are_set_and_the_staff_flag_follows_the_admin_role(admin_client, viewer):
    _change(admin_client, viewer, groups=[_group("admin").pk])
    viewer.refresh_from_db()
    assert (sorted(g.name for g in viewer.groups.all()), viewer.is_staff) == (["admin"], True)
    # an admin now: another admin may no longer change the account
    assert _change(admin_client, viewer, groups=[_group("reviewer").pk]).status_code == 403
    admin_client.force_login(viewer)  # an admin may change its own account
    _change(admin_client, viewer, groups=[_group("reviewer").pk])
    viewer.refresh_from_db()
    assert (sorted(g.name for g in viewer.groups.all()), viewer.is_staff) == (["reviewer"], False)


def test_only_the_three_roles_are_offered(admin_client, reviewer):
    from django.contrib.auth.models import Group, Permission

    ops = Group.objects.create(name="ops")
    ops.permissions.add(Permission.objects.get(codename="delete_user"))
    response = _change(admin_client, reviewer, groups=[ops.pk])
    reviewer.refresh_from_db()
    assert response.status_code == 200  # the form again, with an error
    assert "ops" not in [g.name for g in reviewer.groups.all()]
    html = admin_client.get(f"/admin/auth/user/{reviewer.pk}/change/").content.decode()
    assert ">ops<" not in html and ">admin<" in html


def test_a_superuser_cannot_be_edited_or_deleted_by_the_admin_role(admin_client, root):
    assert _change(admin_client, root, groups=[]).status_code == 403
    assert admin_client.post(f"/admin/auth/user/{root.pk}/delete/", {"post": "yes"}).status_code == 403
    password = {"password1": "x-new-pass-1", "password2": "x-new-pass-1"}
    assert admin_client.post(f"/admin/auth/user/{root.pk}/password/", password).status_code == 403
    root.refresh_from_db()
    assert (root.is_superuser, root.check_password("root-pass")) == (True, True)


def test_a_bulk_delete_by_the_admin_role_never_deletes_a_superuser(admin_client, admin_user, root, viewer):
    from django.contrib.auth.models import Permission, User

    _group("admin").permissions.add(Permission.objects.get(codename="delete_user"))
    response = admin_client.post(
        "/admin/auth/user/",
        {"action": "delete_selected", "_selected_action": [root.pk, viewer.pk], "post": "yes"},
    )
    assert response.status_code == 403  # has_delete_permission(root) is False: the whole action is refused
    assert sorted(User.objects.values_list("username", flat=True)) == ["ada", "root", "vera"]


def test_the_admin_role_adds_a_user_who_is_not_superuser(admin_client):
    from django.contrib.auth.models import User

    response = admin_client.post(
        "/admin/auth/user/add/",
        {
            "username": "nina",
            "password1": "nina-pass-123",
            "password2": "nina-pass-123",
            "usable_password": "true",
            "is_superuser": "on",
            "is_staff": "on",
        },
    )
    nina = User.objects.get(username="nina")
    assert response.status_code == 302
    assert (nina.is_superuser, nina.is_staff) == (False, False)


def test_a_superuser_keeps_the_full_user_admin(client, root, reviewer):
    client.force_login(root)
    fields = _fields(client.get(f"/admin/auth/user/{reviewer.pk}/change/").content.decode())
    assert {"is_superuser", "is_staff", "user_permissions", "groups"} <= fields


@pytest.mark.parametrize("persona", ["reviewer", "viewer"])
def test_other_roles_do_not_reach_the_user_admin(client, request, persona):
    user = request.getfixturevalue(persona)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    client.force_login(user)
    assert client.get("/admin/auth/user/").status_code == 403


@pytest.fixture
def other_admin(db):
    from tests.conftest import make_user

    user = make_user("abe", "admin")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def test_an_admin_cannot_set_another_admins_password(admin_client, other_admin):
    """Issue 21: an admin set another admin's password, then signed in as them."""
    password = {"password1": "x-new-pass-1", "password2": "x-new-pass-1"}
    assert admin_client.post(f"/admin/auth/user/{other_admin.pk}/password/", password).status_code == 403
    other_admin.refresh_from_db()
    assert other_admin.check_password("abe-pass") is True


def test_an_admin_cannot_change_or_delete_another_admin(admin_client, other_admin):
    """Else one could take the admin role away first, then set the password of a plain account."""
    assert admin_client.get(f"/admin/auth/user/{other_admin.pk}/change/").status_code == 200  # viewed
    assert _change(admin_client, other_admin, groups=[_group("reviewer").pk]).status_code == 403
    assert admin_client.post(f"/admin/auth/user/{other_admin.pk}/delete/", {"post": "yes"}).status_code == 403
    assert [g.name for g in other_admin.groups.all()] == ["admin"]


def test_an_admin_still_sets_a_reviewers_password_and_its_own(admin_client, admin_user, reviewer):
    password = {"password1": "x-new-pass-1", "password2": "x-new-pass-1"}
    assert admin_client.post(f"/admin/auth/user/{reviewer.pk}/password/", password).status_code == 302
    assert admin_client.post(f"/admin/auth/user/{admin_user.pk}/password/", password).status_code == 302
    reviewer.refresh_from_db()
    admin_user.refresh_from_db()
    assert (reviewer.check_password("x-new-pass-1"), admin_user.check_password("x-new-pass-1")) == (
        True,
        True,
    )


def test_a_superuser_sets_an_admins_password(client, root, other_admin):
    client.force_login(root)
    password = {"password1": "x-new-pass-1", "password2": "x-new-pass-1"}
    assert client.post(f"/admin/auth/user/{other_admin.pk}/password/", password).status_code == 302
    other_admin.refresh_from_db()
    assert other_admin.check_password("x-new-pass-1") is True
