"""The stored counts: ``manage.py piles --recount`` and ``--check``, a budget change, the hosts' totals.
spec: docs/piles-and-recurrence.md, rules 2-5; README.md ("Commands") (``piles``).
"""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from lessons.models import EntityCount, Host, HostCount, Lesson
from lessons.services.entity_counts import (
    entity_counts_check,
    entity_counts_recount,
    entity_counts_refresh,
)
from review.hosts.selectors import hosts_overview
from review.services.budget import host_set_budget


def stored() -> list[tuple]:
    return list(
        EntityCount.objects.order_by("host_name", "namespace", "subject").values_list(
            "host_name", "subject", "live", "over_budget", "overage", "groups", "pending_drafts", "recurring"
        )
    )


def test_the_corpora_counts_agree_with_a_recount(corpora):
    kept = stored()
    assert entity_counts_check() == []
    stats = entity_counts_recount()
    assert (stats.hosts, stats.entities, stats.piles) == (3, 7, 2)
    assert stored() == kept
    # 10 live, over by 2, six groups (four facts and two umbrellas), two pending drafts, one recurring
    # member.
    assert ("adbuy-desk", "invoice_capture", 10, True, 2, 6, 2, 1) in kept


@pytest.mark.counts_unchecked  # the test corrupts the stored rows on purpose
def test_check_lists_every_difference_and_exits_1(corpora, capsys):
    EntityCount.objects.filter(subject="revenue_models").update(live=1, groups=0)
    HostCount.objects.filter(host__name="adbuy-desk").update(pile_count=5)
    with pytest.raises(CommandError) as caught:
        call_command("piles", "--check")
    assert caught.value.returncode == 1
    assert str(caught.value) == "3 difference(s): run manage.py piles --recount"
    assert capsys.readouterr().out.splitlines() == [
        "host adbuy-desk totals: pile_count is 5, recounted 1",
        "host warehouse-sql entity analytics/revenue_models: live is 1, recounted 8",
        "host warehouse-sql entity analytics/revenue_models: groups is 0, recounted 7",
    ]


@pytest.mark.counts_unchecked  # the rows are deleted behind the writers' backs, then rebuilt
def test_recount_rebuilds_deleted_rows_and_check_is_clean_after(corpora, capsys):
    kept = stored()
    EntityCount.objects.all().delete()
    HostCount.objects.all().delete()
    # Every field (18) of every entity missing; the totals read as zeros, so each non-zero total differs (8).
    assert len(entity_counts_check()) == 7 * 18 + 8
    call_command("piles", "--recount")
    call_command("piles", "--check")
    assert capsys.readouterr().out.splitlines() == [
        "recounted 7 entities (2 over budget) on 3 host(s)",
        "counts agree with the lessons",
    ]
    assert stored() == kept


def test_recount_and_check_of_one_host(corpora, capsys):
    call_command("piles", "--recount", "--host", "warehouse-sql")
    call_command("piles", "--check", "--host", "warehouse-sql")
    assert capsys.readouterr().out.splitlines() == [
        "recounted 2 entities (1 over budget) on 1 host(s)",
        "counts agree with the lessons",
    ]


def test_recount_and_check_cannot_be_asked_together(corpora, capsys):
    with pytest.raises(SystemExit) as caught:
        call_command("piles", "--recount", "--check")
    assert caught.value.code == 2
    assert "argument --check: not allowed with argument --recount" in capsys.readouterr().err


def test_a_budget_change_moves_the_flags_groups_and_totals_in_step(corpora, admin_user):
    host = Host.objects.get(name="warehouse-sql")
    host_set_budget(host=host, actor=admin_user, max_active=8, budget_enabled=None, reason="Room for all")
    row = EntityCount.objects.get(subject="revenue_models")
    assert (row.live, row.over_budget, row.overage, row.groups, row.document) == (8, False, 0, 0, "")
    assert HostCount.objects.get(host=host).pile_count == 0
    host_set_budget(host=host, actor=admin_user, max_active=6, budget_enabled=None, reason="Tighter")
    row.refresh_from_db()
    assert (row.over_budget, row.overage, row.groups) == (True, 2, 7)
    assert row.document.startswith("warehouse-sql\nanalytics\nrevenue_models\n")
    host_set_budget(host=host, actor=admin_user, max_active=None, budget_enabled=False, reason="Off")
    row.refresh_from_db()
    assert (row.over_budget, row.overage, row.groups) == (False, 0, 0)


def test_the_hosts_page_reads_the_stored_totals(corpora, django_assert_num_queries):
    with django_assert_num_queries(1):
        rows = [(h.name, h.live_lessons, h.entity_count, h.pile_count) for h in hosts_overview()]
    assert rows == [("adbuy-desk", 15, 4, 1), ("support-triage", 11, 1, 0), ("warehouse-sql", 9, 2, 1)]


def test_a_host_without_counts_shows_zeros(db):
    Host.objects.create(name="fresh")
    assert [(h.name, h.live_lessons, h.entity_count, h.pile_count) for h in hosts_overview()] == [
        ("fresh", 0, 0, 0)
    ]


@pytest.mark.counts_unchecked  # the test corrupts a stored total on purpose
def test_check_reports_a_wrong_total_and_a_refresh_recounts_it(corpora):
    row = EntityCount.objects.get(subject="revenue_models")
    assert row.total == Lesson.objects.filter(host_id=row.host_id, subject="revenue_models").count() > 0
    EntityCount.objects.filter(id=row.id).update(total=row.total + 3)
    assert entity_counts_check() == [
        f"host warehouse-sql entity analytics/revenue_models: total is {row.total + 3}, recounted {row.total}"
    ]
    entity_counts_refresh(host=row.host_id, keys=[("analytics", "revenue_models")])
    assert entity_counts_check() == []
