from django.apps import AppConfig


class LessonsConfig(AppConfig):
    """The domain: hosts, lessons, verdicts, exposures, corrections, drafts; ingest, piles, recurrence."""

    name = "lessons"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the post_save receiver that keeps recurrence counts on each key's current version.
        from lessons.recurrence import refresh  # noqa: F401
