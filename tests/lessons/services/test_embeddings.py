"""The facts' text vectors stored in the database (lessons.services.embeddings): each text encoded once,
read back by a process that does not hold it, a vector of another model replaced, and the same number of
queries whatever the process holds (docs/piles-and-recurrence.md, "Facts")."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.core import embedding
from lessons.models import TextEmbedding
from lessons.services.embeddings import embeddings_load

pytestmark = pytest.mark.django_db

TEXTS = [
    "Send an Idempotency-Key header on every charge.",
    "Every charge request carries an idempotency key.",
    "Keys are honoured for 24 hours.",
]


@pytest.fixture(autouse=True)
def empty_process():
    embedding.forget()
    yield
    embedding.forget()


def test_texts_are_encoded_once_and_stored_with_the_model():
    assert embeddings_load(TEXTS + TEXTS[:1]) == 3
    rows = {r.key: r for r in TextEmbedding.objects.all()}
    assert set(rows) == {embedding.text_key(t) for t in TEXTS}
    for text in TEXTS:
        row = rows[embedding.text_key(text)]
        assert row.model == embedding.MODEL
        stored = np.frombuffer(bytes(row.vector), dtype="<f4")
        assert np.array_equal(stored, embedding.embed_many([text])[0])
    assert embeddings_load(TEXTS) == 0


def test_another_process_reads_the_stored_vectors_instead_of_encoding():
    embeddings_load(TEXTS)
    before = embedding.vectors(TEXTS).copy()
    embedding.forget()  # as a fresh process
    assert embeddings_load(TEXTS) == 0
    assert set(embedding.cached(TEXTS)) == set(TEXTS)
    assert np.array_equal(embedding.vectors(TEXTS), before)


def test_a_vector_of_another_model_is_computed_again_and_replaced():
    key = embedding.text_key(TEXTS[0])
    TextEmbedding.objects.create(key=key, model="old-model", vector=b"\0" * 16)
    assert embeddings_load(TEXTS[:1]) == 1
    row = TextEmbedding.objects.get(key=key)
    assert row.model == embedding.MODEL and len(bytes(row.vector)) == embedding.DIMENSIONS * 4


def test_the_queries_do_not_depend_on_what_the_process_holds():
    with CaptureQueriesContext(connection) as cold:
        embeddings_load(TEXTS)
    TextEmbedding.objects.all().delete()  # the process holds them; the database does not
    with CaptureQueriesContext(connection) as warm:
        assert embeddings_load(TEXTS) == 0
    assert len(cold) == len(warm) == 2  # read, then store
    with CaptureQueriesContext(connection) as stored:
        embeddings_load(TEXTS)
    assert len(stored) == 1  # read only
    assert TextEmbedding.objects.count() == 3
