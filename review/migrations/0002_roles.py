"""Create the groups viewer, reviewer and admin with their permissions (review/roles.py)."""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

from review.roles import ROLE_PERMISSIONS


def create_roles(apps, schema_editor):
    # Permissions are normally created after all migrations ran; the groups need them now.
    for label in ("auth", "lessons", "review"):
        create_permissions(global_apps.get_app_config(label), apps=apps, verbosity=0)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        # A permission of a model a later migration adds does not exist yet here; that migration runs
        # create_roles again (0004 for review.claim_pile).
        wanted = [
            p
            for app, code in perms
            for p in Permission.objects.filter(content_type__app_label=app, codename=code)
        ]
        group.permissions.set(wanted)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=list(ROLE_PERMISSIONS)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("lessons", "0001_initial"),
        ("review", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
