"""``manage.py demo``: load the project's demo corpus and demo users (idempotent). README.md, "Commands"."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import Group, User
from django.db import transaction

from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.management.base import Command as BaseCommand

DEMO = Path(__file__).resolve().parents[2] / "demo"
# demo.jsonl: three hosts of the product's own making; adbuy-desk.jsonl: the ad-buy desk whose
# invoice_capture pile the docs tell about (ten rules, four facts).
DEMO_CORPORA = (DEMO / "demo.jsonl", DEMO / "adbuy-desk.jsonl")
# Demo logins: (username, password, groups). "priya" triggered the claims-intake demo drafts, so she
# may not approve those; "reviewer" can.
DEMO_USERS = (
    ("viewer", "viewer-demo-pass", ["viewer"]),
    ("reviewer", "reviewer-demo-pass", ["reviewer"]),
    ("admin", "admin-demo-pass", ["admin"]),
    ("priya", "priya-demo-pass", ["reviewer"]),
)


class Command(BaseCommand):
    help = "Load the demo corpus and the demo users viewer, reviewer, admin (and priya); prints the logins."

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000/", help="the address printed with the logins (make run's)"
        )

    def handle(self, *args, url="http://127.0.0.1:8000/", **options):
        report = ingest_sources(sources=[file_source(str(path)) for path in DEMO_CORPORA])
        if not report.ok:
            for line in report.error_lines():
                self.stderr.write(line)
            self.fail("the demo corpus did not load")
        with transaction.atomic():
            for username, password, groups in DEMO_USERS:
                user, created = User.objects.get_or_create(username=username)
                if created:
                    user.set_password(password)
                    user.is_staff = "admin" in groups
                    user.save()
                user.groups.set(Group.objects.filter(name__in=groups))
        self.stdout.write(f"demo corpus: {report.summary_line()}")
        for note in report.held:  # a reviewer's decision since the last load wins over the corpus: say which
            self.stdout.write(f"  held: {note}")
        self.stdout.write(f"demo logins ({url}):")
        for username, password, groups in DEMO_USERS:
            self.stdout.write(f"  {username:<9} password {password:<20} role {', '.join(groups)}")
