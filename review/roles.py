"""The three roles and the permissions each holds. README.md ("Commands"); docs/decisions.md.

A viewer reads; a reviewer also decides (retire, restore, consolidations) and claims piles; an admin also sets
budgets, manages hosts, users and API tokens.
"""

VIEWER = "viewer"
REVIEWER = "reviewer"
ADMIN = "admin"
ROLES = (VIEWER, REVIEWER, ADMIN)

# Every permission a page, a service or a command checks, in one place.
PERM_VIEW = "lessons.view_lesson"
PERM_VIEW_DRAFT = "lessons.view_draft"
PERM_VIEW_DECISIONS = "review.view_decision"
PERM_DECIDE = "review.decide"
PERM_CLAIM = "review.claim_pile"  # claim a pile for a while (issue 12, Build 3): reviewers and admins
PERM_SET_BUDGET = "review.set_budget"
PERM_MANAGE_TOKENS = "review.manage_tokens"
PERM_IMPORT = "lessons.add_host"  # importing may create hosts (the base template's Import link checks it too)

_VIEW = [
    ("lessons", "view_host"),
    ("lessons", "view_lesson"),
    ("lessons", "view_verdict"),
    ("lessons", "view_exposure"),
    ("lessons", "view_correction"),
    ("lessons", "view_draft"),
    ("lessons", "view_recurrencecount"),
    ("review", "view_decision"),
    ("review", "view_decisionack"),
]
_DECIDE = [("review", "decide"), ("review", "claim_pile")]
_ADMIN = [
    ("review", "set_budget"),
    ("review", "manage_tokens"),
    ("lessons", "change_host"),
    ("lessons", "add_host"),
    ("review", "view_apitoken"),
    ("review", "add_apitoken"),
    ("review", "change_apitoken"),
    ("review", "delete_apitoken"),
    ("auth", "view_user"),
    ("auth", "add_user"),
    ("auth", "change_user"),
    ("auth", "view_group"),
]

ROLE_PERMISSIONS: dict[str, list[tuple[str, str]]] = {
    VIEWER: _VIEW,
    REVIEWER: _VIEW + _DECIDE,
    ADMIN: _VIEW + _DECIDE + _ADMIN,
}


def roles_ensure() -> None:
    """Create the three groups with their permissions when missing (idempotent).

    The migration does this once; tests that flush the database (transactional tests) call it again,
    since a flush re-creates permissions but not the rows of a data migration.
    """
    import importlib

    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def user_role(user) -> str:
    """The strongest role a user's permissions give: ``admin``, ``reviewer``, ``viewer`` or ``none``."""
    if user.has_perm(PERM_SET_BUDGET):
        return ADMIN
    if user.has_perm(PERM_DECIDE):
        return REVIEWER
    if user.has_perm(PERM_VIEW):
        return VIEWER
    return "none"
