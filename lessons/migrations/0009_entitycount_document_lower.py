"""The piles' search documents lowered as ``lessons.core.text.search_lower`` lowers them (issue 10: the
queue's text filter on PostgreSQL matches with ``LIKE`` on the lowered document instead of ``ILIKE``,
several times faster).

Lowered is ``str.lower``, then a dotted ``i`` ("İ" lowered: "i" and a combining dot) as "i" and the final
sigma as "σ", so that any case of a word finds it as ``ILIKE`` (one character at a time) did. The fold is
written out here as it was when this migration was made. Only over-budget entities have a document. Rows
are read and written in chunks, through the ORM, so that SQLite's FTS5 triggers keep the trigram table in
step. Reverting keeps the lowered documents: the code before this migration matched them
case-insensitively anyway.
"""

from django.db import migrations

CHUNK = 2000
FOLDS = (("i\u0307", "i"), ("\u03c2", "\u03c3"))


def _lowered(document: str) -> str:
    document = document.lower()
    for found, kept in FOLDS:
        document = document.replace(found, kept)
    return document


def lower_documents(apps, schema_editor):
    EntityCount = apps.get_model("lessons", "EntityCount")
    ids = list(EntityCount.objects.exclude(document="").order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), CHUNK):
        rows = EntityCount.objects.filter(id__in=ids[start : start + CHUNK]).values_list("id", "document")
        changed = [EntityCount(id=pk, document=_lowered(doc)) for pk, doc in rows if doc != _lowered(doc)]
        EntityCount.objects.bulk_update(changed, ["document"])


class Migration(migrations.Migration):
    dependencies = [("lessons", "0008_covered_indexes_dropped")]

    operations = [migrations.RunPython(lower_documents, migrations.RunPython.noop)]
