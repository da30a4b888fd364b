"""Drop the index of ``Exposure.lesson`` (issue 10, Build 4: one B-tree fewer to keep up for each exposure
ingest writes, at a place that moves with every row).

No query reads exposures by lesson (every statement on the table that the tests of lessons/ and review/
make, logged): they filter by host, and EXPLAIN QUERY PLAN at 1,000,000 lines of each search uses
``exposure_unique_identity``, ``exposure_session`` or ``exposure_lesson_key``; a join from an exposure to
its lesson goes by the lesson's primary key. The index only served a lesson's deletion (its exposures set
to NULL), and the app deletes no lesson (the admin is read-only; retiring is a status).
Dropped by the name Django gave it, as 0008 does, where ``AlterField`` would make SQLite copy the table.
Reversible.
"""

from django.db import migrations, models
from django.db.models import deletion


def _index(apps, schema_editor):
    model = apps.get_model("lessons", "exposure")
    field = model._meta.get_field("lesson")
    # The name Django gave the field's index when it created it (db_index=True on the foreign key).
    return (
        model,
        field,
        str(schema_editor._create_index_name(model._meta.db_table, [field.column], suffix="")),
    )


def drop_index(apps, schema_editor):
    _model, _field, name = _index(apps, schema_editor)
    schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


def create_index(apps, schema_editor):
    model, field, name = _index(apps, schema_editor)
    schema_editor.execute(schema_editor._create_index_sql(model, fields=[field], name=name))


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0009_entitycount_document_lower"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_index, create_index)],
            state_operations=[
                migrations.AlterField(
                    model_name="exposure",
                    name="lesson",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=deletion.SET_NULL,
                        related_name="exposures",
                        to="lessons.lesson",
                    ),
                ),
            ],
        ),
    ]
