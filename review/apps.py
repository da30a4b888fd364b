from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The reviewer-facing app: pages, decisions and their hash chain, exports, the JSON API."""

    name = "review"
    default_auto_field = "django.db.models.BigAutoField"
