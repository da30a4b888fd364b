from django.apps import AppConfig


class ReviewConfig(AppConfig):
    """The reviewer-facing app: pages, decisions and their hash chain, exports, the JSON API."""

    name = "review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The task results of django-tasks-db stay out of the Django admin: the admin role holds no
        # permission on them, and the import page shows each job (review/imports/views.py).
        from django.contrib import admin
        from django_tasks_db.models import DBTaskResult

        if admin.site.is_registered(DBTaskResult):
            admin.site.unregister(DBTaskResult)
        # large recurrence refreshes of a web request's status changes go to the task worker
        from lessons.signals import recount_offered
        from review.services.recount import recount_offer_taken

        recount_offered.connect(recount_offer_taken, dispatch_uid="recount_offer_taken")
        # new corrections, exposures or verdicts for a host: its decisions' outcomes are recomputed
        from lessons.signals import host_evidence_changed
        from review.services.outcomes import outcomes_after_evidence

        host_evidence_changed.connect(outcomes_after_evidence, dispatch_uid="outcomes_after_evidence")
        # a sign-in's last_login never waits for an import's write lock (review/signin.py)
        from django.contrib.auth.signals import user_logged_in

        from review.signin import last_login_if_free

        user_logged_in.disconnect(dispatch_uid="update_last_login")
        user_logged_in.connect(last_login_if_free, dispatch_uid="update_last_login")
