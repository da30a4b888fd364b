"""Shared fixtures: the personas (viewer, reviewer, admin, outsider), the ingest runner and the corpora
(ingested once per test session, restored per test)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


def pytest_configure(config):
    """Sessions in the database on both databases, so that the exact query counts (a session's read is
    one of them) are the same: the settings keep SQLite's sessions in files (review/signin.py), which the
    subprocess scenarios run with the real settings exercise (tests/review/web/test_lock_wait.py,
    tests/review/jobs/test_concurrency_acceptance.py).

    And a connection per request in this process, as before PostgreSQL kept its connections by default
    (config/settings.py): pytest-django opens and closes the test process's connections itself, and a
    kept connection's health check at a request's start would touch the database in tests that have no
    database. The servers the tests start as subprocesses run with the real settings."""
    from django.conf import settings

    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    settings.DATABASES["default"]["CONN_MAX_AGE"] = 0
    settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] = False


# Fixtures of each area live in tests/fixtures/ so that a test file sits beside the code it tests
# (tests/lessons/..., tests/review/<area>/...) and still finds them, wherever its folder is.
pytest_plugins = [
    "tests.fixtures.api",
    "tests.fixtures.browser",
    "tests.fixtures.counts",
    "tests.fixtures.decisions",
    "tests.fixtures.drafts",
    "tests.fixtures.importers",
    "tests.fixtures.log",
    "tests.fixtures.outcomes",
    "tests.fixtures.pages",
]

# The example inputs the tests read: the three interchange corpora and the altimate-dbt-project store.
# They live in the repository so a clone alone passes (nothing outside it is read).
CORPORA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """Persona fixtures create users in nearly every test; the production hasher is slow on purpose."""
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(username: str, group: str | None = "reviewer", **extra):
    """The tests' one user factory: a user with password ``<username>-pass`` and the role ``group`` (None:
    no role); ``extra`` are more ``User`` fields (``is_active=False``)."""
    from django.contrib.auth.models import Group, User

    from review.roles import roles_ensure

    if group and not Group.objects.filter(name=group).exists():
        roles_ensure()
    user = User.objects.create_user(username=username, password=f"{username}-pass", **extra)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def user_factory(db):
    """``user_factory(username, group="reviewer", **extra)``: ``make_user`` as a fixture."""
    return make_user


@pytest.fixture
def viewer(db):
    return make_user("vera", "viewer")


@pytest.fixture
def reviewer(db):
    return make_user("rita", "reviewer")


@pytest.fixture
def second_reviewer(db):
    return make_user("rob", "reviewer")


@pytest.fixture
def admin_user(db):
    return make_user("ada", "admin")


@pytest.fixture
def as_viewer(client, viewer):
    """The test client signed in as the viewer."""
    client.force_login(viewer)
    return client


@pytest.fixture
def as_reviewer(client, reviewer):
    """The test client signed in as the reviewer."""
    client.force_login(reviewer)
    return client


@pytest.fixture
def outsider(client):
    """An anonymous visitor: the Django test client, signed in as nobody."""
    return client


def ingest_records(records, **options):
    """Ingest records (dicts or raw lines) as one batch through the real ingest service; returns the
    report. ``options`` go to ``ingest_sources`` (``dry_run``, ``skip_invalid``, ...)."""
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source

    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return ingest_sources(sources=[bytes_source("\n".join(lines).encode(), name="batch.jsonl")], **options)


@pytest.fixture
def ingest(db):
    """``ingest_records`` for a test that uses the database."""
    return ingest_records


CORPUS_FILES = ("adbuy-desk.jsonl", "support-triage.jsonl", "warehouse-sql.jsonl")
ADBUY_FILES = ("adbuy-desk.jsonl",)


def ingest_corpus_files(names: tuple[str, ...]):
    """Ingest files of tests/data (by name) through the real ingest service; returns the report."""
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import file_source

    report = ingest_sources(sources=[file_source(str(CORPORA / n)) for n in names])
    assert report.ok, report.error_lines()
    return report


def _stored_models() -> list:
    """Every model with a table of its own (many-to-many tables included), in the app registry's order,
    but the data versions (counters of committed writes, not data a test keeps or restores)."""
    from django.apps import apps

    return [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed
        and not m._meta.proxy
        and m._meta.label not in ("lessons.DataVersion", "lessons.HostVersion")
    ]


def table_rows() -> dict:
    """``{model: {primary key: {attname: value}}}`` of every table now."""
    state = {}
    for model in _stored_models():
        fields = [f.attname for f in model._meta.concrete_fields]
        pk = model._meta.pk.attname
        state[model] = {row[pk]: row for row in model._base_manager.order_by("pk").values(*fields)}
    return state


def rows_added_since(old: dict) -> dict:
    """``{model: [{attname: value}, ...]}`` in key order of the rows not in ``old`` (a ``table_rows()``), for
    the models that have such rows. Raises AssertionError when a row of ``old`` was changed or deleted: only
    added rows can be kept and restored."""
    added = {}
    for model, rows in table_rows().items():
        gone_or_changed = [pk for pk, row in old[model].items() if rows.get(pk) != row]
        assert not gone_or_changed, f"{model._meta.label}: rows {gone_or_changed} changed or deleted"
        new = [row for pk, row in rows.items() if pk not in old[model]]
        if new:
            added[model] = new
    return added


@dataclass(frozen=True)
class CapturedRows:
    """The rows a builder (an ingest of corpus files, a small world of decisions) adds to an otherwise
    empty test database, kept to be restored in each test that needs them.

    ``value``: what the builder returned (the ingest report, the world); ``rows``: ``{model: [{attname:
    value}, ...]}`` in primary-key order, only for models the builder added to; ``before``: ``{model: row
    count}`` of those models before it ran (rows the migrations made).
    """

    value: object
    rows: dict
    before: dict

    @classmethod
    def capture(cls, build: Callable[[], object]) -> CapturedRows:
        """Run ``build()`` inside a transaction that is rolled back at once, keeping the rows it added.

        The transaction stands where a test's own would: ``transaction.on_commit`` callbacks registered
        by the builder are dropped, as they are in a ``db`` test.
        """
        from django.db import transaction

        with transaction.atomic():
            old = table_rows()
            value = build()
            rows = rows_added_since(old)
            transaction.set_rollback(True)
        return cls(value=value, rows=rows, before={model: len(old[model]) for model in rows})

    def restore(self) -> bool:
        """Insert the captured rows again (same primary keys, so foreign keys between them hold).

        False, inserting nothing, when a model the builder adds to already holds more rows than before the
        capture (the test wrote first): then the rows could clash and only running the builder is right.
        ``bulk_create`` sends no signals (the builder's own post_save work is already in the rows) and
        stamps ``auto_now``/``auto_now_add`` fields with the time of the restore, as an ingest now would.
        Sequences are reset past the restored keys (PostgreSQL; SQLite moves its own) so the test's
        inserts get fresh keys.
        """
        from django.core.management.color import no_style
        from django.db import connection, transaction

        if any(model._base_manager.count() != n for model, n in self.before.items()):
            return False
        with transaction.atomic():
            for model, rows in self.rows.items():
                model._base_manager.bulk_create([model(**row) for row in rows])
            with connection.cursor() as cursor:
                for sql in connection.ops.sequence_reset_sql(no_style(), list(self.rows)):
                    cursor.execute(sql)
        return True


@pytest.fixture(scope="session")
def corpus_rows(django_db_setup, django_db_blocker) -> dict[tuple[str, ...], CapturedRows]:
    """The corpora ingested once per test session: ``{file names: CapturedRows}`` for the three corpora
    together (``CORPUS_FILES``) and adbuy-desk alone (``ADBUY_FILES``).

    Why rows kept in memory and restored per test, rather than one ingest left in an outer transaction
    that tests nest in, or a template database: a test that asks for ``corpora`` shares its module with
    tests that must see an empty database, and the browser tests (``transaction=True``) flush tables,
    which no outer transaction survives; a template database works on PostgreSQL only. Restoring the 221
    rows (8 tables) with ``bulk_create`` in the test's own transaction works the same on SQLite and
    PostgreSQL, in ``db`` and ``transactional_db`` tests, and each test still rolls back (or flushes) its
    writes: every test starts from the corpora exactly as ingested. tests/test_fixtures.py checks that a
    restore stores what a real ingest stores, row for row.

    Set up by the first test that asks, before its own ``db`` (pytest sets up session fixtures first). Ask
    for it only together with ``db`` or ``transactional_db``: pytest-django creates the test database only
    when a collected test needs one.
    """
    with django_db_blocker.unblock():
        return {
            names: CapturedRows.capture(lambda names=names: ingest_corpus_files(names))
            for names in (CORPUS_FILES, ADBUY_FILES)
        }


def load_corpus(snapshots: dict, names: tuple[str, ...]):
    """Give the test database what ingesting ``names`` gives: the session's rows restored, or (when the
    test wrote lesson data first) a real ingest. Returns the ingest report."""
    snapshot = snapshots[names]
    return snapshot.value if snapshot.restore() else ingest_corpus_files(names)


@pytest.fixture
def corpora(db, corpus_rows):
    """The three interchange corpora of tests/data, as ingested (restored from the session's one ingest,
    see ``corpus_rows``); returns the ingest report."""
    return load_corpus(corpus_rows, CORPUS_FILES)
