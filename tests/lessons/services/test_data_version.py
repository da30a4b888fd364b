"""The data version (lessons/services/data_version.py; docs/api.md, "Conditional reads"): up once after
each committed transaction that wrote, after each write outside a transaction; never for a rollback, a
read, or a sign-in table."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from lessons.models import Host
from lessons.services.data_version import current, note_write, written_table


def _value() -> int:
    version = current()
    return 0 if version == "0" else int(version.split(".")[1])


@pytest.mark.parametrize(
    "sql,table",
    [
        ('INSERT INTO "lessons_host" ("name") VALUES (%s)', "lessons_host"),
        ('  UPDATE "lessons_lesson" SET "status" = %s', "lessons_lesson"),
        ('DELETE FROM "review_decision" WHERE 1', "review_decision"),
        ("INSERT OR IGNORE INTO lessons_verdict VALUES (1)", "lessons_verdict"),
        ('TRUNCATE "lessons_host", "lessons_lesson"', "lessons_host"),
        ('SELECT "id" FROM "lessons_host"', None),
        ('UPDATE "django_session" SET "expire_date" = %s', None),
        ('INSERT INTO "axes_accessattempt" ("username") VALUES (%s)', None),
        ("UPDATE lessons_dataversion SET value = value + 1 WHERE id = 1", None),
    ],
)
def test_the_statements_that_count(sql, table):
    assert written_table(sql) == table


@pytest.mark.django_db(transaction=True)
def test_a_write_outside_a_transaction_raises_it_at_once():
    start = _value()
    Host.objects.create(name="alpha")
    assert _value() == start + 1
    Host.objects.filter(name="alpha").update(max_active=3)
    assert _value() == start + 2
    list(Host.objects.all())  # a read
    assert _value() == start + 2


@pytest.mark.django_db(transaction=True)
def test_a_transaction_raises_it_once_when_it_commits_and_never_when_it_rolls_back():
    start = _value()
    with transaction.atomic():
        Host.objects.create(name="alpha")
        Host.objects.create(name="beta")
        with transaction.atomic():
            Host.objects.filter(name="beta").update(max_active=4)
        assert _value() == start  # not before the commit
    assert _value() == start + 1
    with pytest.raises(RuntimeError), transaction.atomic():
        Host.objects.create(name="gamma")
        raise RuntimeError
    assert _value() == start + 1
    with transaction.atomic():
        try:
            with transaction.atomic():  # a savepoint rolled back: its write is gone, and so is its count
                Host.objects.create(name="delta")
                raise RuntimeError
        except RuntimeError:
            pass
    assert _value() == start + 1
    assert sorted(Host.objects.values_list("name", flat=True)) == ["alpha", "beta"]


@pytest.mark.django_db(transaction=True)
def test_a_wipe_starts_another_epoch():
    Host.objects.create(name="alpha")
    before = current()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM lessons_dataversion")
    Host.objects.create(name="beta")
    after = current()
    assert after.endswith(".1") and after.split(".")[0] != before.split(".")[0]


@pytest.mark.django_db(transaction=True)
def test_a_write_the_wrapper_cannot_see_is_counted_by_its_caller():
    start = _value()
    with transaction.atomic():
        note_write(connection)  # as PostgreSQL's COPY does
        note_write(connection)
    assert _value() == start + 1


@pytest.mark.django_db(transaction=True)
def test_a_version_that_cannot_be_raised_never_fails_the_committed_write(monkeypatch, caplog):
    from django.db import OperationalError

    import lessons.services.data_version as data_version

    def locked(connection, hosts=None):
        raise OperationalError("canceling statement due to lock timeout")

    monkeypatch.setattr(data_version, "_raise", locked)
    Host.objects.create(name="alpha")  # outside a transaction
    with transaction.atomic():
        Host.objects.create(name="beta")
    assert sorted(Host.objects.values_list("name", flat=True)) == ["alpha", "beta"]
    assert caplog.text.count("the data version was not raised after a committed write") == 2
