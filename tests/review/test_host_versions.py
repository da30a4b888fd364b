"""Per-host data versions (lessons/services/data_version.py ``for_host``, ``host_current``,
``lesson_current``; docs/production.md, "Cache"; docs/api.md, "Conditional reads"): a write a service
narrows to host A changes the ETag of every page that shows A (its pile, lesson and host pages and their
regions; the queue, the log, the hosts list) and leaves host B's pile, lesson and host pages, their tags
and their kept parts, as they were; a write narrowed to no host changes them all; a lesson page follows the
hosts that hold its text."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client

import review.lessons.lookups
import review.middleware
import review.piles.lookups
from lessons.core.text import lesson_hash
from lessons.models import Host
from lessons.services.data_version import current, for_host, host_current, lesson_current
from review.services.budget import host_set_budget
from review.services.claims import pile_claim
from review.services.decisions import lessons_retire
from tests.builders import day_ms, lesson
from tests.spies import counted_calls

pytestmark = pytest.mark.django_db(transaction=True)

TEXTS = {
    host: [f"Copy {host} order field {i} exactly as printed, digit {i} kept." for i in range(3)]
    for host in ("acme", "bolt")
}
HASHES = {host: [lesson_hash("qa", "orders", t) for t in texts] for host, texts in TEXTS.items()}
SHARED = "Quote the customer's order number in every reply to them."
SHARED_HASH = lesson_hash("qa", "orders", SHARED)
REGION = {"HX-Request": "true", "HX-Target": "pile"}


def host_pages(host: str) -> list[tuple[str, dict]]:
    """The pages that show one host's data only, and their htmx regions."""
    pile = f"/pile/?host={host}&namespace=qa&subject=orders"
    return [
        (pile, {}),
        (pile, REGION),
        (f"/lessons/{host}/{HASHES[host][0]}/", {}),
        (f"/lessons/{host}/{SHARED_HASH}/", {}),
        (f"/hosts/{host}/", {}),
        (f"/hosts/{host}/", {"HX-Request": "true", "HX-Target": "entities"}),
    ]


GLOBAL_PAGES = [("/", {}), ("/decisions/", {}), ("/hosts/", {})]


def _records(*hosts: str) -> list[dict]:
    records = []
    for host in hosts:
        records.append({"type": "host", "name": host, "max_active": 2, "budget_enabled": True})
        texts = [*TEXTS[host], SHARED]
        records += [
            lesson(host=host, namespace="qa", subject="orders", text=t, created_at=day_ms(i))
            for i, t in enumerate(texts)
        ]
    return records


@pytest.fixture
def two_hosts(ingest, monkeypatch):
    """acme and bolt, each a pile of four on qa:orders, one text shared; the minute held still (it is part
    of every page tag)."""
    assert ingest(_records("acme", "bolt")).ok
    now = review.middleware.time.time()
    monkeypatch.setattr(review.middleware.time, "time", lambda: now)
    cache.clear()
    return Host.objects.get(name="acme"), Host.objects.get(name="bolt")


def tags(client, pages) -> dict[tuple[str, str], str]:
    found = {}
    for page, headers in pages:
        response = client.get(page, headers=headers)
        assert response.status_code == 200, page
        found[(page, headers.get("HX-Target", ""))] = response["ETag"]
    return found


def still_304(client, before: dict) -> dict[tuple[str, str], int]:
    """Each page asked with the tag it had: its status (304 when nothing it shows changed)."""
    statuses = {}
    for (page, target), tag in before.items():
        headers = {"If-None-Match": tag}
        if target:
            headers |= {"HX-Request": "true", "HX-Target": target}
        statuses[(page, target)] = client.get(page, headers=headers).status_code
    return statuses


def test_a_retire_on_one_host_changes_its_pages_and_the_global_ones_only(
    two_hosts, as_reviewer, reviewer, monkeypatch
):
    acme, _bolt = two_hosts
    acme_only = [p for p in host_pages("acme") if SHARED_HASH not in p[0]]
    bolt_only = [p for p in host_pages("bolt") if SHARED_HASH not in p[0]]
    before = tags(as_reviewer, acme_only + bolt_only + GLOBAL_PAGES)
    assert len(set(before.values())) == len(before)
    piles = counted_calls(monkeypatch, review.piles.lookups, "pile_detail")
    lessons = counted_calls(monkeypatch, review.lessons.lookups, "lesson_detail")

    lessons_retire(host=acme, hashes=HASHES["acme"][1:2], actor=reviewer, reason="restates field 0")

    statuses = still_304(as_reviewer, before)
    changed = {key for key, status in statuses.items() if status == 200}
    kept = {key for key, status in statuses.items() if status == 304}
    assert changed == {(p, h.get("HX-Target", "")) for p, h in acme_only + GLOBAL_PAGES}
    assert kept == {(p, h.get("HX-Target", "")) for p, h in bolt_only}
    # the 200s above built acme's pile (once: the region reads the page's kept detail) and lesson again
    assert (len(piles), len(lessons)) == (1, 1)
    # bolt's pages built without If-None-Match: the same tags, their parts read from the cache
    assert tags(as_reviewer, bolt_only) == {key: before[key] for key in kept}
    assert (len(piles), len(lessons)) == (1, 1)


def test_a_shared_text_ties_the_lesson_pages_of_the_hosts_holding_it(two_hosts, as_reviewer, reviewer):
    acme, _bolt = two_hosts
    shared = {host: (f"/lessons/{host}/{SHARED_HASH}/", {}) for host in ("acme", "bolt")}
    bolt_pile = ("/pile/?host=bolt&namespace=qa&subject=orders", {})
    before = tags(as_reviewer, [shared["acme"], shared["bolt"], bolt_pile])
    lessons_retire(host=acme, hashes=[SHARED_HASH], actor=reviewer, reason="said elsewhere")
    statuses = still_304(as_reviewer, before)
    # bolt's page of the text shows acme's lesson of it ("The same text on other hosts"): it changed
    assert statuses == {
        (shared["acme"][0], ""): 200,
        (shared["bolt"][0], ""): 200,
        (bolt_pile[0], ""): 304,
    }
    bolt_lesson = as_reviewer.get(shared["bolt"][0]).content.decode()
    assert "retracted" in bolt_lesson.split("The same text on other hosts")[1]


def test_claims_and_budgets_are_narrowed_to_their_host(two_hosts, as_reviewer, reviewer, admin_user):
    acme, _bolt = two_hosts
    bolt_only = [p for p in host_pages("bolt") if SHARED_HASH not in p[0]]
    before = tags(as_reviewer, host_pages("acme") + bolt_only)
    pile_claim(host=acme, namespace="qa", subject="orders", user=reviewer)
    host_set_budget(host=acme, actor=admin_user, max_active=3, budget_enabled=True, reason="more room")
    statuses = still_304(as_reviewer, before)
    assert {key for key, s in statuses.items() if s == 200} == {
        (p, h.get("HX-Target", "")) for p, h in host_pages("acme")
    }
    assert {key[0] for key, s in statuses.items() if s == 304} == {p for p, _h in bolt_only}


def test_an_unscoped_write_changes_every_page(two_hosts, as_reviewer):
    pages = host_pages("acme") + host_pages("bolt") + GLOBAL_PAGES
    before = tags(as_reviewer, pages)
    # a write no code narrowed (an admin's edit of a user, as the admin site makes it)
    get_user_model().objects.filter(username="rita").update(first_name="Rita")
    assert set(still_304(as_reviewer, before).values()) == {200}


def test_a_batch_of_several_hosts_raises_each(two_hosts, ingest, as_reviewer):
    before = tags(as_reviewer, host_pages("acme") + host_pages("bolt"))
    records = [
        lesson(host=host, namespace="qa", subject="orders", text=f"New rule of {host}.", created_at=day_ms(9))
        for host in ("acme", "bolt")
    ]
    start = host_current(["acme"]).split(".")[1]
    assert ingest(records).ok
    assert set(still_304(as_reviewer, before).values()) == {200}
    # narrowed: the unscoped count did not move (the batch's writes were all of its hosts)
    assert host_current(["acme"]).split(".")[1] == start


def test_exact_versions_and_they_never_go_backwards():
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM lessons_dataversion")
        cursor.execute("DELETE FROM lessons_hostversion")
    Host.objects.create(name="alpha")  # unscoped: makes the row, a new epoch
    epoch = current().split(".")[0]
    assert (current(), host_current(["alpha"])) == (f"{epoch}.1", f"{epoch}.u1")
    with for_host("alpha"):
        Host.objects.filter(name="alpha").update(max_active=3)
    assert (current(), host_current(["alpha"]), host_current(["beta"])) == (
        f"{epoch}.2",
        f"{epoch}.u1.alpha:2",
        f"{epoch}.u1",
    )
    with transaction.atomic():  # one transaction, two hosts: one raise, both set to it
        with for_host("beta"):
            Host.objects.create(name="beta")
        with for_host("alpha"):
            Host.objects.filter(name="alpha").update(max_active=4)
    assert host_current(["alpha", "beta"]) == f"{epoch}.u1.alpha:3.beta:3"
    with for_host("beta"):
        Host.objects.filter(name="beta").update(max_active=5)
    assert (host_current(["alpha"]), host_current(["beta"])) == (f"{epoch}.u1.alpha:3", f"{epoch}.u1.beta:4")
    with transaction.atomic():  # a narrowed write and an unscoped one: every host's pages
        with for_host("alpha"):
            Host.objects.filter(name="alpha").update(max_active=6)
        Host.objects.filter(name="beta").update(max_active=6)
    assert (current(), host_current(["alpha"]), host_current(["beta"])) == (
        f"{epoch}.5",
        f"{epoch}.u2.alpha:3",  # the unscoped count covers it
        f"{epoch}.u2.beta:4",
    )
    with for_host():  # a scope that never named its host counts as unscoped
        Host.objects.filter(name="beta").update(max_active=7)
    assert host_current(["beta"]) == f"{epoch}.u3.beta:4"
    with pytest.raises(RuntimeError), transaction.atomic(), for_host("alpha"):
        Host.objects.filter(name="alpha").update(max_active=8)
        raise RuntimeError  # rolled back: nothing raised
    assert (current(), host_current(["alpha"])) == (f"{epoch}.6", f"{epoch}.u3.alpha:3")
    # the host rows lost (a wipe of that table alone): the next raise sets the global value, never lower
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM lessons_hostversion")
    with for_host("alpha"):
        Host.objects.filter(name="alpha").update(max_active=9)
    assert host_current(["alpha"]) == f"{epoch}.u3.alpha:7"
    # a raise that lost a race (another set the row from a newer global value first) does not lower it
    with connection.cursor() as cursor:
        cursor.execute("UPDATE lessons_hostversion SET value = 50 WHERE name = 'alpha'")
    with for_host("alpha"):
        Host.objects.filter(name="alpha").update(max_active=10)
    assert (current(), host_current(["alpha"])) == (f"{epoch}.8", f"{epoch}.u3.alpha:50")
    # a wipe of the global row: a new epoch, in which the old epoch's host rows count as absent
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM lessons_dataversion")
    with for_host("alpha"):
        Host.objects.filter(name="alpha").update(max_active=11)
    after = host_current(["alpha"])
    new_epoch = after.split(".")[0]
    assert new_epoch != epoch and after == f"{new_epoch}.u0.alpha:1"


def test_copy_counted_by_its_caller_is_narrowed_too():
    from lessons.services.data_version import note_write

    Host.objects.create(name="alpha")
    before = (host_current(["alpha"]), host_current(["beta"]))
    with transaction.atomic(), for_host("alpha"):
        note_write(connection)  # as PostgreSQL's COPY does
    after = (host_current(["alpha"]), host_current(["beta"]))
    assert after[0] != before[0] and after[1] == before[1]


def test_the_lesson_version_follows_the_hosts_holding_its_text(ingest):
    assert ingest(_records("acme")).ok
    with for_host("acme"):
        Host.objects.filter(name="acme").update(description="the shop")
    epoch = current().split(".")[0]
    acme = host_current(["acme"])
    assert lesson_current("acme", SHARED_HASH) == acme
    # bolt gains the text: acme's lesson page of it changes with bolt's own (narrowed) write
    assert ingest(_records("bolt")).ok
    shared = lesson_current("acme", SHARED_HASH)
    bolt_value = host_current(["bolt"]).split(".bolt:")[1]
    assert shared == f"{acme}.bolt:{bolt_value}" and shared.startswith(f"{epoch}.")
    assert lesson_current("acme", HASHES["acme"][0]) == acme  # a text only acme holds


def test_a_sign_in_changes_no_page(two_hosts, as_reviewer, second_reviewer):
    # a sign-in writes the user's last_login (shown by the admin only, which answers no conditional
    # request): every page another reviewer holds stays a 304, the global and host versions as they were
    before = tags(as_reviewer, host_pages("acme") + GLOBAL_PAGES)
    versions = (current(), host_current(["acme"]))
    newcomer = Client()
    signed = newcomer.post("/accounts/login/", {"username": "rob", "password": "rob-pass"})
    assert signed.status_code == 302
    assert get_user_model().objects.get(username="rob").last_login is not None  # it was written
    assert (current(), host_current(["acme"])) == versions
    assert set(still_304(as_reviewer, before).values()) == {304}


@pytest.mark.parametrize("spelled", ["acme%20", "%20acme", "acme%0A"])
def test_a_pile_address_whose_host_has_blanks_around_it_follows_that_hosts_version(
    two_hosts, as_reviewer, reviewer, spelled
):
    """The pile page trims ``?host=`` (review/web/lookups.py ``query_text``) and shows host acme for
    ``?host=acme%20``: its version must be acme's, or a retire on acme is answered 304 (and its kept
    detail served) to that address."""
    acme, _bolt = two_hosts
    page = f"/pile/?host={spelled}&namespace=qa&subject=orders"
    first = as_reviewer.get(page)
    assert first.status_code == 200 and first.content.decode().count('data-testid="pile-count"><b>4<') == 1
    lessons_retire(host=acme, hashes=HASHES["acme"][1:2], actor=reviewer, reason="restates field 0")
    again = as_reviewer.get(page, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200
    fresh = as_reviewer.get(page).content.decode()
    assert 'data-testid="pile-count"><b>3<' in fresh
