"""Migration lessons 0009 lowers the stored search documents; the text filter then finds them by any case."""

from __future__ import annotations

import importlib

from django.apps import apps as global_apps
from django.db import connection

from lessons.models import EntityCount
from lessons.selectors.piles import pile_queue

MIGRATION = importlib.import_module("lessons.migrations.0009_entitycount_document_lower")


def test_the_migration_lowers_documents_and_the_filter_finds_them(entity):
    entity(3, subject="orders", texts=["Ship the ORDERS on Monday.", "Count twice.", "Bill ÉCOLE once."])
    row = EntityCount.objects.get(subject="orders")
    assert row.document == row.document.lower() and "ship the orders on monday." in row.document
    stored = row.document
    # the document in another case, as the writers stored mixed case before the migration
    EntityCount.objects.filter(pk=row.pk).update(document=stored.upper())
    MIGRATION.lower_documents(global_apps, connection.schema_editor())
    assert EntityCount.objects.get(pk=row.pk).document == stored
    for text in ("ORDERS ON", "orders on", "Orders On", "ship"):
        assert [r["subject"] for r in pile_queue(text=text)] == ["orders"], text


def test_non_ascii_text_matches_in_any_case(entity):
    entity(3, subject="orders", texts=["Bill the ÉCOLE account.", "Count twice.", "Bill once."])
    for text in ("école", "ÉCOLE", "École account"):
        assert [r["subject"] for r in pile_queue(text=text)] == ["orders"], text


TURKISH_AND_GREEK = ["Call the İSTANBUL office first.", "Use a ΣΥΝΔΕΣΗ that is ΑΣΦΑΛΗΣ.", "Count twice."]


def test_a_dotted_capital_i_and_a_sigma_match_in_any_case(entity):
    """As ILIKE did on PostgreSQL (one character at a time): str.lower alone wrote "İ" as "i" and a
    combining dot, and a word-final "Σ" as "ς", so these found nothing on PostgreSQL."""
    entity(3, subject="orders", texts=TURKISH_AND_GREEK)
    for text in ("istanbul", "ISTANBUL", "İstanbul", "İSTANBUL", "ΣΥΝΔΕΣ", "συνδεσ", "συνδες", "ασφαλης"):
        assert [r["subject"] for r in pile_queue(text=text)] == ["orders"], text


def test_the_migration_folds_what_str_lower_alone_writes(entity):
    entity(3, subject="orders", texts=TURKISH_AND_GREEK)
    row = EntityCount.objects.get(subject="orders")
    stored = row.document
    assert "istanbul" in stored and "συνδεση" in stored and "ασφαλησ" in stored
    # str.lower alone: a combining dot after the i, a final sigma
    EntityCount.objects.filter(pk=row.pk).update(document=stored.upper().lower())
    assert "ασφαλης" in EntityCount.objects.get(pk=row.pk).document
    MIGRATION.lower_documents(global_apps, connection.schema_editor())
    assert EntityCount.objects.get(pk=row.pk).document == stored
    for text in ("istanbul", "ΑΣΦΑΛΗΣ."):
        assert [r["subject"] for r in pile_queue(text=text)] == ["orders"], text
