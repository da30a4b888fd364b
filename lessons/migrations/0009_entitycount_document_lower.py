"""The piles' search documents in lower case (issue 10: the queue's text filter on PostgreSQL matches with
``LIKE`` on the lowered document instead of ``ILIKE``, several times faster).

Only over-budget entities have a document. Rows are read and written in chunks, with Python's
``str.lower`` (what the writers use now), through the ORM, so that SQLite's FTS5 triggers keep the
trigram table in step. Reverting keeps the lowered documents: the code before this migration matched
them case-insensitively anyway.
"""

from django.db import migrations

CHUNK = 2000


def lower_documents(apps, schema_editor):
    EntityCount = apps.get_model("lessons", "EntityCount")
    ids = list(EntityCount.objects.exclude(document="").order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), CHUNK):
        rows = EntityCount.objects.filter(id__in=ids[start : start + CHUNK]).values_list("id", "document")
        changed = [EntityCount(id=pk, document=doc.lower()) for pk, doc in rows if doc != doc.lower()]
        EntityCount.objects.bulk_update(changed, ["document"])


class Migration(migrations.Migration):
    dependencies = [("lessons", "0008_covered_indexes_dropped")]

    operations = [migrations.RunPython(lower_documents, migrations.RunPython.noop)]
