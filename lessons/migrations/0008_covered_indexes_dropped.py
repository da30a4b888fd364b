"""Drop the single-column foreign-key indexes that a composite index already covers (issue 10, Build 4:
every index is one more B-tree to keep up for each row ingest writes).

- ``Exposure.host``: ``exposure_unique_identity`` (host, key), ``exposure_session`` and
  ``exposure_lesson_key`` all start with host.
- ``Correction.host``: ``correction_unique_identity`` (host, key) and ``correction_session``.
- ``CorrectionAttribution.host``: ``attribution_session`` (host, session); ``.correction``:
  ``attribution_unique_lesson`` (correction, lesson); ``.lesson``: ``attribution_lesson`` (lesson, outcome).

Only the index goes: the database operation drops it by the name Django gave it (the same on SQLite and
PostgreSQL), where ``AlterField`` would make SQLite copy each table whole. Reversible.
"""

from django.db import migrations, models
from django.db.models import deletion

COVERED = (
    ("exposure", "host"),
    ("correction", "host"),
    ("correctionattribution", "host"),
    ("correctionattribution", "correction"),
    ("correctionattribution", "lesson"),
)


def _index_name(schema_editor, model, field) -> str:
    # The name Django gave the field's index when it created it (db_index=True on the foreign key).
    return str(schema_editor._create_index_name(model._meta.db_table, [field.column], suffix=""))


def drop_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("lessons", model_name)
        name = _index_name(schema_editor, model, model._meta.get_field(field_name))
        schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


def create_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("lessons", model_name)
        field = model._meta.get_field(field_name)
        name = _index_name(schema_editor, model, field)
        schema_editor.execute(schema_editor._create_index_sql(model, fields=[field], name=name))


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0007_entitycount_total"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
            state_operations=[
                migrations.AlterField(
                    model_name="correction",
                    name="host",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=deletion.PROTECT,
                        related_name="corrections",
                        to="lessons.host",
                    ),
                ),
                migrations.AlterField(
                    model_name="correctionattribution",
                    name="correction",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=deletion.CASCADE,
                        related_name="attributions",
                        to="lessons.correction",
                    ),
                ),
                migrations.AlterField(
                    model_name="correctionattribution",
                    name="host",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=deletion.CASCADE,
                        related_name="attributions",
                        to="lessons.host",
                    ),
                ),
                migrations.AlterField(
                    model_name="correctionattribution",
                    name="lesson",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=deletion.CASCADE,
                        related_name="attributions",
                        to="lessons.lesson",
                    ),
                ),
                migrations.AlterField(
                    model_name="exposure",
                    name="host",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=deletion.PROTECT,
                        related_name="exposures",
                        to="lessons.host",
                    ),
                ),
            ],
        ),
    ]
