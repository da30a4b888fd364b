from django.apps import AppConfig


class LessonsConfig(AppConfig):
    """The domain: hosts, lessons, verdicts, exposures, corrections, drafts; ingest, piles, recurrence."""

    name = "lessons"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created

        from lessons.services.data_version import install

        connection_created.connect(install, dispatch_uid="lessons.data_version")
        for connection in connections.all(initialized_only=True):
            if connection.connection is not None:
                install(sender=None, connection=connection)
