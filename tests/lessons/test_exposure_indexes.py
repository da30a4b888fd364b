"""The exposures' indexes after every migration: the three that reads use, none on the lesson (0010); the
lesson key's with the session (0011)."""

from django.db import connection

from lessons.models import Exposure


def test_exposures_are_indexed_by_host_and_key_session_or_lesson_key_and_not_by_lesson(db):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Exposure._meta.db_table)
    indexed = sorted(
        (tuple(c["columns"]), c["unique"])
        for c in constraints.values()
        if (c["index"] or c["unique"]) and not c["primary_key"] and not c["foreign_key"]
    )
    assert indexed == [
        (("host_id", "key"), True),
        (("host_id", "lesson_key", "session"), False),
        (("host_id", "session"), False),
    ]
