"""The session-wide corpora (tests/conftest.py, ``corpus_rows``) give what a real ingest gives, row for row.

Rows are compared with their keys replaced by ranks (the n-th row of its table in key order, and a foreign
key by the rank of the row it points to), since a real ingest on PostgreSQL takes keys further along the
sequences; ``auto_now``/``auto_now_add`` times are left out (they are the time of the ingest or restore).
"""

from __future__ import annotations

import pytest

from tests.conftest import (
    ADBUY_FILES,
    CORPUS_FILES,
    ingest_corpus_files,
    load_corpus,
    rows_added_since,
    table_rows,
)


def _stamped(field) -> bool:
    return getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)


def ranked(rows_by_model: dict) -> dict[str, list[tuple]]:
    """``{model label: [row as a tuple, keys as ranks]}`` of ``{model: [{attname: value}]}`` in key order."""
    rank = {
        model: {row[model._meta.pk.attname]: i for i, row in enumerate(rows)}
        for model, rows in rows_by_model.items()
    }
    out = {}
    for model, rows in rows_by_model.items():
        fields = [f for f in model._meta.concrete_fields if not _stamped(f)]
        out[model._meta.label] = [
            tuple(
                (f.attname, rank[model][row[f.attname]])
                if f.primary_key
                else (f.attname, ("rank", rank[f.related_model][row[f.attname]]))
                if f.is_relation and f.related_model in rank and row[f.attname] in rank[f.related_model]
                else (f.attname, row[f.attname])
                for f in fields
            )
            for row in rows
        ]
    return out


@pytest.mark.parametrize("names", [CORPUS_FILES, ADBUY_FILES])
def test_a_restore_stores_what_the_session_ingest_added(db, corpus_rows, names):
    old = table_rows()
    assert load_corpus(corpus_rows, names) is corpus_rows[names].value
    assert ranked(rows_added_since(old)) == ranked(corpus_rows[names].rows)


@pytest.mark.parametrize("names", [CORPUS_FILES, ADBUY_FILES])
def test_a_real_ingest_in_a_test_stores_what_a_restore_does(db, corpus_rows, names):
    old = table_rows()
    ingest_corpus_files(names)
    assert ranked(rows_added_since(old)) == ranked(corpus_rows[names].rows)


@pytest.mark.django_db(transaction=True)
def test_a_committed_ingest_with_its_after_commit_work_stores_what_a_restore_does(corpus_rows):
    # Committed for real, the post_save receiver's recurrence refreshes run after each commit; in a ``db``
    # test (and in the session's capture) they never run. The rows must come out the same either way.
    old = table_rows()
    ingest_corpus_files(CORPUS_FILES)
    assert ranked(rows_added_since(old)) == ranked(corpus_rows[CORPUS_FILES].rows)


def test_the_capture_holds_every_table_the_corpora_fill(db, corpus_rows):
    def sizes(names):
        return {m._meta.label: len(rows) for m, rows in corpus_rows[names].rows.items()}

    assert (
        sizes(CORPUS_FILES)
        == {
            "lessons.Host": 3,
            "lessons.Lesson": 38,
            "lessons.Verdict": 30,
            "lessons.Exposure": 87,
            "lessons.Correction": 12,
            "lessons.Draft": 2,
            "lessons.RecurrenceCount": 37,
            "lessons.CorrectionAttribution": 12,
            "lessons.EntityCount": 7,
            "lessons.HostCount": 3,
            "lessons.TextEmbedding": 21,  # the two piles' lessons, any status (10 + 8 live, 3 not): the facts' vectors
        }
    )
    assert sizes(ADBUY_FILES) == {
        "lessons.Host": 1,
        "lessons.Lesson": 15,
        "lessons.Verdict": 28,
        "lessons.Exposure": 81,
        "lessons.Correction": 9,
        "lessons.Draft": 2,
        "lessons.RecurrenceCount": 15,
        "lessons.CorrectionAttribution": 9,
        "lessons.EntityCount": 4,
        "lessons.HostCount": 1,
        "lessons.TextEmbedding": 10,
    }


def test_a_test_that_wrote_lesson_data_first_gets_a_real_ingest(ingest, corpus_rows):
    from lessons.models import Host, Lesson

    assert ingest([{"type": "host", "name": "adbuy-desk", "max_active": 3, "budget_enabled": True}]).ok
    assert corpus_rows[ADBUY_FILES].restore() is False
    report = load_corpus(corpus_rows, ADBUY_FILES)
    assert report is not corpus_rows[ADBUY_FILES].value and report.ok
    # As a real ingest does, the host that exists keeps its budget (3, not the corpus's 8).
    assert Host.objects.get(name="adbuy-desk").max_active == 3
    assert Lesson.objects.count() == len(corpus_rows[ADBUY_FILES].rows[Lesson])


def test_a_capture_refuses_a_change_to_a_row_that_was_there_before(db):
    from django.contrib.auth.models import Group

    old = table_rows()
    Group.objects.filter(name="viewer").update(name="watcher")
    with pytest.raises(AssertionError, match=r"auth\.Group: rows \[\d+\] changed or deleted"):
        rows_added_since(old)
