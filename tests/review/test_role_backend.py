"""RoleBackend: the permissions ModelBackend gives, in one query (issue 10)."""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, User

from review.backends import RoleBackend
from review.roles import PERM_DECIDE, PERM_SET_BUDGET, PERM_VIEW


def _fresh(user: User) -> User:
    return User.objects.get(pk=user.pk)  # no permission cache


def test_the_same_permissions_as_model_backend_in_one_query(db, viewer, reviewer, django_assert_num_queries):
    extra = User.objects.create_user("own-and-group")
    extra.groups.add(Group.objects.get(name="viewer"))
    extra.user_permissions.add(Permission.objects.get(codename="set_budget"))
    extra.user_permissions.add(Permission.objects.get(codename="view_lesson"))  # also through the group
    only_own = User.objects.create_user("only-own")
    only_own.user_permissions.add(Permission.objects.get(codename="decide"))
    superuser = User.objects.create_superuser("root")
    inactive = User.objects.create_user("gone", is_active=False)
    inactive.groups.add(Group.objects.get(name="reviewer"))
    for user in (viewer, reviewer, extra, only_own, superuser, inactive):
        expected = ModelBackend().get_all_permissions(_fresh(user))
        fresh = _fresh(user)
        with django_assert_num_queries(0 if not user.is_active else 1):
            assert RoleBackend().get_all_permissions(fresh) == expected, user.username
        with django_assert_num_queries(0):  # cached for the request
            RoleBackend().get_all_permissions(fresh)
    assert {PERM_VIEW, PERM_SET_BUDGET} <= RoleBackend().get_all_permissions(_fresh(extra))
    assert PERM_DECIDE not in RoleBackend().get_all_permissions(_fresh(extra))
    assert RoleBackend().get_all_permissions(_fresh(only_own)) == {PERM_DECIDE}
    assert len(RoleBackend().get_all_permissions(_fresh(superuser))) == Permission.objects.count()


def test_has_perm_through_the_configured_backends(db, viewer, reviewer):
    assert _fresh(reviewer).has_perm(PERM_DECIDE) and not _fresh(viewer).has_perm(PERM_DECIDE)
    assert _fresh(viewer).has_perm(PERM_VIEW)
