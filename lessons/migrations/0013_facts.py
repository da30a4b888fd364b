"""Issue 22: the facts of a pile stored on EntityCount (fact_groups, facts, restatements, facts_version)
and the reviewers' RestatementMark.

On SQLite the columns are added with ``ALTER TABLE … ADD COLUMN``: Django's own AddField would rebuild the
table (NOT NULL fields with a default), and dropping the old table drops the FTS5 triggers of migration
0006 (as 0007 explains). The stored facts start empty (version 0): ``manage.py piles --regroup`` fills
them (docs/production.md, "Upgrading"); until then a pile's facts are computed when read.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


FIELDS = (
    ("fact_groups", models.JSONField(blank=True, default=list)),
    ("facts", models.PositiveIntegerField(default=0)),
    ("facts_version", models.PositiveIntegerField(default=0)),
    ("restatements", models.PositiveIntegerField(default=0)),
)
SQLITE_ADD = (
    """ALTER TABLE "lessons_entitycount" ADD COLUMN "fact_groups" text NOT NULL DEFAULT '[]' """
    """CHECK ((JSON_VALID("fact_groups") OR "fact_groups" IS NULL))""",
    *(
        f'ALTER TABLE "lessons_entitycount" ADD COLUMN "{name}" integer unsigned NOT NULL DEFAULT 0 '
        f'CHECK ("{name}" >= 0)'
        for name in ("facts", "facts_version", "restatements")
    ),
)


def add_fields(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in SQLITE_ADD:
            schema_editor.execute(sql)
        return
    model = apps.get_model("lessons", "EntityCount")
    for name, field in FIELDS:
        field = field.clone()
        field.set_attributes_from_name(name)
        schema_editor.add_field(model, field)


def remove_fields(apps, schema_editor):
    model = apps.get_model("lessons", "EntityCount")
    for name, field in FIELDS:
        field = field.clone()
        field.set_attributes_from_name(name)
        schema_editor.remove_field(model, field)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0012_correction_newest"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RestatementMark",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("a", models.CharField(max_length=64)),
                ("b", models.CharField(max_length=64)),
                ("same", models.BooleanField()),
                ("reason", models.CharField(max_length=500)),
                ("made_at", models.DateTimeField()),
            ],
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name="entitycount", name=n, field=f) for n, f in FIELDS
            ],
            database_operations=[migrations.RunPython(add_fields, remove_fields)],
        ),
        migrations.AddIndex(
            model_name="entitycount",
            index=models.Index(
                condition=models.Q(("over_budget", True)),
                fields=["facts", "host_name", "namespace", "subject"],
                name="entitycount_q_facts",
            ),
        ),
        migrations.AddIndex(
            model_name="entitycount",
            index=models.Index(
                condition=models.Q(("over_budget", True)),
                fields=["restatements", "host_name", "namespace", "subject"],
                name="entitycount_q_restatements",
            ),
        ),
        migrations.AddField(
            model_name="restatementmark",
            name="host",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="restatement_marks",
                to="lessons.host",
            ),
        ),
        migrations.AddField(
            model_name="restatementmark",
            name="made_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="restatementmark",
            constraint=models.UniqueConstraint(fields=("host", "a", "b"), name="restatementmark_unique_pair"),
        ),
        migrations.AddConstraint(
            model_name="restatementmark",
            constraint=models.CheckConstraint(
                condition=models.Q(("a__lt", models.F("b"))), name="restatementmark_ordered"
            ),
        ),
        migrations.AddConstraint(
            model_name="restatementmark",
            constraint=models.CheckConstraint(
                condition=models.Q(("reason", ""), _negated=True), name="restatementmark_reason"
            ),
        ),
    ]
