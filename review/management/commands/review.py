"""``manage.py review retire|restore|approve|reject|rollback ... --as USER --reason TEXT [--code CODE]``.

The same services, checks and refusals as the pages; the CLI acts on the fresh state, so no pile
version is checked. Exit 0 with a one-line summary, 1 when refused or a name names nothing, 2 on
wrong usage. README.md, "Commands"; docs/decisions.md, "The actions".
"""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import CommandParser

from lessons.core.piles import entity_label
from lessons.core.text import hash8
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError
from lessons.models import Lesson
from review.management.lookups import (
    LESSONS_ON_SEVERAL_HOSTS,
    LookupRefused,
    draft_by_id,
    host_by_name,
    lesson_by_prefix,
    user_by_name,
)
from review.services.common import DecisionRefused
from review.services.consolidation import consolidation_rollback, draft_approve, draft_reject
from review.services.decisions import lesson_restore, lessons_retire


class UsageParser(CommandParser):
    """A sub-command parser whose mistakes exit 2 (wrong usage), never 1 and never a traceback."""

    def error(self, message):
        if self.called_from_command_line:
            ArgumentParser.error(self, message)  # prints the sub-command's usage, exits 2
        raise UsageError(f"Error: {message}")


class Command(BaseCommand):
    help = "Retire or restore lessons, and approve, reject or roll back consolidation drafts, as a reviewer."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(
            dest="action", metavar="ACTION", required=True, parser_class=UsageParser
        )

        def action(name: str, help_text: str, target: str, target_help: str, *, many: bool = False):
            sub = actions.add_parser(name, help=help_text)
            metavar = "DRAFT_ID" if target == "draft_id" else "HASH"
            sub.add_argument(target, nargs="+" if many else None, metavar=metavar, help=target_help)
            sub.add_argument("--as", dest="as_user", required=True, metavar="USER", help="the acting user")
            sub.add_argument("--reason", required=True, help="why (1 to 500 characters)")
            sub.add_argument("--code", help="reason code: duplicate, restates_another, regressed, drifted, …")
            sub.add_argument("--host", help="the host, when a hash prefix or draft id is on several")
            return sub

        hash_help = "a lesson hash or a unique prefix of at least 8 hex characters"
        draft_help = "the draft's id from the source, or the dashboard's numeric id"
        action("retire", "retire live lessons of one entity", "hashes", hash_help, many=True)
        action("restore", "restore a lesson retired by a decision", "hash", hash_help)
        approve = action("approve", "approve a consolidation draft", "draft_id", draft_help)
        approve.add_argument(
            "--confirm-dropped-anchors",
            action="store_true",
            help="approve even though the draft drops anchors of lessons that held",
        )
        action("reject", "reject a pending or stale draft", "draft_id", draft_help)
        action("rollback", "roll back an approved consolidation", "draft_id", draft_help)

    def handle(self, *args, action, as_user, reason, code, host, **options):
        try:
            actor = user_by_name(as_user)
            host_obj = host_by_name(host)
            handler = getattr(self, f"_{action}")
            line = handler(actor=actor, host=host_obj, reason=reason, code=code, **options)
        except (LookupRefused, DecisionRefused) as exc:
            self.fail(str(exc))
        self.stdout.write(line)

    def _retire(self, *, actor, host, reason, code, hashes, **options) -> str:
        lessons = [lesson_by_prefix(value, host=host) for value in hashes]
        hosts = sorted({lesson.host.name for lesson in lessons})
        if len(hosts) > 1:
            raise LookupRefused(LESSONS_ON_SEVERAL_HOSTS.format(hosts=", ".join(hosts)))
        decisions = lessons_retire(
            host=lessons[0].host,
            hashes=[x.hash for x in lessons],
            actor=actor,
            reason=reason,
            reason_code=code,
        )
        first, last = decisions[0], decisions[-1]
        seqs = f"#{first.seq}" if first is last else f"#{first.seq}-#{last.seq}"
        entity = entity_label(first.namespace or "", first.subject or "")
        return (
            f"retired {len(decisions)} lesson(s) on {first.host} {entity}: "
            f"decision {seqs}, batch {first.batch}"
        )

    def _restore(self, *, actor, host, reason, code, hash, **options) -> str:  # noqa: A002
        lesson: Lesson = lesson_by_prefix(hash, host=host)
        decision = lesson_restore(lesson=lesson, actor=actor, reason=reason, reason_code=code)
        entity = entity_label(decision.namespace or "", decision.subject or "")
        return f"restored {hash8(lesson.hash)}… on {decision.host} {entity}: decision #{decision.seq}"

    def _approve(self, *, actor, host, reason, code, draft_id, confirm_dropped_anchors, **options) -> str:
        draft = draft_by_id(draft_id, host=host)
        decision = draft_approve(
            draft=draft,
            actor=actor,
            reason=reason,
            reason_code=code,
            confirm_dropped_anchors=confirm_dropped_anchors,
        )
        entity = entity_label(decision.namespace or "", decision.subject or "")
        return (
            f"approved draft {draft.ext_id}: consolidation {hash8(decision.created_hash)}… supersedes "
            f"{len(draft.supersedes)} lesson(s) on {decision.host} {entity}: decision #{decision.seq}"
        )

    def _reject(self, *, actor, host, reason, code, draft_id, **options) -> str:
        draft = draft_by_id(draft_id, host=host)
        decision = draft_reject(draft=draft, actor=actor, reason=reason, reason_code=code)
        return f"rejected draft {draft.ext_id} on {decision.host}: decision #{decision.seq}"

    def _rollback(self, *, actor, host, reason, code, draft_id, **options) -> str:
        draft = draft_by_id(draft_id, host=host)
        decision = consolidation_rollback(draft=draft, actor=actor, reason=reason, reason_code=code)
        return (
            f"rolled back draft {draft.ext_id}: consolidation {hash8(decision.lesson_hash)}… retracted, "
            f"the lessons it superseded are live again: decision #{decision.seq}"
        )
