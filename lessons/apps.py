from django.apps import AppConfig


class LessonsConfig(AppConfig):
    """The domain: hosts, lessons, verdicts, exposures, corrections, drafts; ingest, piles, recurrence."""

    name = "lessons"
    default_auto_field = "django.db.models.BigAutoField"
