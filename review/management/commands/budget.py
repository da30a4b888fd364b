"""``manage.py budget HOST [--max-active N] [--enable|--disable] --as USER --reason TEXT [--code CODE]``.

Records a ``set_budget`` decision (admin role). Exit 0 with a one-line summary, 1 when refused or a name
names nothing, 2 on wrong usage (including giving nothing to change). README.md, "Commands";
docs/decisions.md.
"""

from __future__ import annotations

from lessons.core.interchange import MAX_ACTIVE_MAX, MAX_ACTIVE_MIN
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError
from review.management.lookups import LookupRefused, host_by_name, user_by_name
from review.services.budget import BUDGET_NOTHING_GIVEN, host_set_budget
from review.services.common import DecisionRefused


def _state(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


class Command(BaseCommand):
    help = "Change a host's budget (max_active, enabled or not) as an admin, with a reason."

    def add_arguments(self, parser):
        parser.add_argument("host", metavar="HOST")
        parser.add_argument(
            "--max-active",
            type=int,
            metavar="N",
            help=f"the new max_active ({MAX_ACTIVE_MIN} to {MAX_ACTIVE_MAX})",
        )
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--enable", dest="enabled", action="store_const", const=True, default=None)
        switch.add_argument("--disable", dest="enabled", action="store_const", const=False)
        parser.add_argument("--as", dest="as_user", required=True, metavar="USER", help="the acting user")
        parser.add_argument("--reason", required=True, help="why (1 to 500 characters)")
        parser.add_argument("--code", help="reason code: duplicate, restates_another, …, other")

    def handle(self, *args, host, max_active, enabled, as_user, reason, code, **options):
        if max_active is None and enabled is None:
            raise UsageError(BUDGET_NOTHING_GIVEN)
        try:
            actor = user_by_name(as_user)
            host_obj = host_by_name(host, label="HOST")
            decision = host_set_budget(
                host=host_obj,
                actor=actor,
                max_active=max_active,
                budget_enabled=enabled,
                reason=reason,
                reason_code=code,
            )
        except (LookupRefused, DecisionRefused) as exc:
            self.fail(str(exc))
        ev = decision.evidence
        before, after = ev["before"], ev["after"]
        self.stdout.write(
            f"{decision.host}: max_active {before['max_active']} -> {after['max_active']}, "
            f"budget {_state(before['budget_enabled'])} -> {_state(after['budget_enabled'])}; "
            f"piles {ev['piles_before']} -> {ev['piles_after']}: decision #{decision.seq}"
        )
