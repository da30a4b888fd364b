"""EntityCount.total (lessons of any status: the host page's "All lessons", issue 10) and the host page's
two indexes.

On SQLite the column is added with ``ALTER TABLE … ADD COLUMN``: Django's own AddField would rebuild the
table for a NOT NULL field with a default, and dropping the old table drops the FTS5 triggers of
migration 0006. The existing rows are counted from the lessons in the same migration, so the counts check
is clean right after ``migrate``; the count comes after the indexes: on PostgreSQL an index built over
rows updated earlier in the same transaction is marked ``indcheckxmin`` and ignored by the planner while
any older transaction runs.
"""

from django.db import migrations, models

FIELD = models.PositiveIntegerField(default=0)
SQLITE_ADD = (
    'ALTER TABLE "lessons_entitycount" ADD COLUMN "total" integer unsigned NOT NULL DEFAULT 0 '
    'CHECK ("total" >= 0)'
)
FILL = (
    'UPDATE "lessons_entitycount" SET "total" = (SELECT COUNT(*) FROM "lessons_lesson" l '
    'WHERE l."host_id" = "lessons_entitycount"."host_id" '
    'AND l."namespace" = "lessons_entitycount"."namespace" '
    'AND l."subject" = "lessons_entitycount"."subject")'
)


def add_total(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_ADD)
    else:
        field = FIELD.clone()
        field.set_attributes_from_name("total")
        schema_editor.add_field(apps.get_model("lessons", "EntityCount"), field)


def remove_total(apps, schema_editor):
    field = FIELD.clone()
    field.set_attributes_from_name("total")
    schema_editor.remove_field(apps.get_model("lessons", "EntityCount"), field)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0006_counts_entitycount"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(model_name="entitycount", name="total", field=FIELD)],
            database_operations=[migrations.RunPython(add_total, remove_total)],
        ),
        migrations.AddIndex(
            model_name="entitycount",
            index=models.Index(
                fields=["host", "-live", "namespace", "subject"], name="entitycount_host_live"
            ),
        ),
        migrations.AddIndex(
            model_name="entitycount",
            index=models.Index(
                fields=["host", "-total", "namespace", "subject"], name="entitycount_host_total"
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
    ]
