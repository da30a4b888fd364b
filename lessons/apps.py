from django.apps import AppConfig


class LessonsConfig(AppConfig):
    """The domain: hosts, lessons, verdicts, exposures, corrections, drafts; ingest, piles, recurrence."""

    name = "lessons"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate

        from lessons.services.data_version import install
        from lessons.tasks import regroups_after_migrate

        connection_created.connect(install, dispatch_uid="lessons.data_version")
        post_migrate.connect(
            regroups_after_migrate, sender=self, dispatch_uid="lessons.regroups_after_migrate"
        )
        for connection in connections.all(initialized_only=True):
            if connection.connection is not None:
                install(sender=None, connection=connection)
