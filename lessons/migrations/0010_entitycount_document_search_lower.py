"""The piles' search documents lowered as ``lessons.core.text.search_lower`` lowers them: 0009 stored
``str.lower``, which writes a dotted capital I as "i" and a combining dot, and a capital sigma ending a
word as the final sigma, so "istanbul" no longer found "İSTANBUL" nor "ΣΥΝΔΕΣ" found "ΣΥΝΔΕΣΗ" on
PostgreSQL, as ``ILIKE`` (which lowers one character at a time) did before.

Only documents holding one of the two are rewritten, in chunks, through the ORM (SQLite's FTS5 triggers
keep the trigram table in step). The fold is written out here, as it was when this migration was made.
Reverting keeps the folded documents: the filter before this migration finds them as well as it did.
"""

from django.db import migrations
from django.db.models import Q

CHUNK = 2000
FOLDS = (("i\u0307", "i"), ("\u03c2", "\u03c3"))


def _fold(document: str) -> str:
    for found, kept in FOLDS:
        document = document.replace(found, kept)
    return document


def fold_documents(apps, schema_editor):
    EntityCount = apps.get_model("lessons", "EntityCount")
    holding = Q()
    for found, _kept in FOLDS:
        holding |= Q(document__contains=found)
    ids = list(EntityCount.objects.filter(holding).order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), CHUNK):
        rows = EntityCount.objects.filter(id__in=ids[start : start + CHUNK]).values_list("id", "document")
        changed = [EntityCount(id=pk, document=_fold(doc)) for pk, doc in rows if doc != _fold(doc)]
        EntityCount.objects.bulk_update(changed, ["document"])


class Migration(migrations.Migration):
    dependencies = [("lessons", "0009_entitycount_document_lower")]

    operations = [migrations.RunPython(fold_documents, migrations.RunPython.noop)]
