"""Claims on the pages: the pile's claim box (Claim / Renew / Release for reviewers, read-only for viewers),
the queue's "claimed by …" marker without a query per row, two reviewers at once. Issue 12, Build 3."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from lessons.models import Host, Lesson
from review.models import PileClaim
from review.piles.views import CLAIM_NOTICES
from review.services.claims import CLAIM_HELD_BY_OTHER, pile_claim
from tests.html import inline_text, parse
from tests.review.piles.test_queue import QUEUE_MAX_QUERIES

ENTITY = "host=acme&namespace=desk.test&subject=invoice_capture"
PILE = f"/pile/?{ENTITY}"
CLAIM = f"/pile/claim/?{ENTITY}"


def claim_box(client) -> tuple[str, list[str]]:
    """The claim box's text and its buttons' values."""
    box = parse(client.get(PILE).content).find(id="claim")
    return inline_text(box), [b.attrs["value"] for b in box.find_all("button")]


def claim_for(user, minutes_ago: int = 0, subject: str = "invoice_capture"):
    at = timezone.now() - timedelta(minutes=minutes_ago, seconds=5)
    return pile_claim(
        host=Host.objects.get(name="acme"), namespace="desk.test", subject=subject, user=user, now=at
    )


def version(client) -> str:
    return parse(client.get(PILE).content).find("input", name="pile_version").attrs["value"]


def test_an_unclaimed_pile_offers_a_reviewer_the_claim_button(pile, client, reviewer):
    client.force_login(reviewer)
    assert claim_box(client) == ("Nobody has claimed this pile. Claim for 15 min", ["claim"])


def test_claiming_through_htmx_swaps_the_box_with_renew_and_release(pile, client, reviewer):
    client.force_login(reviewer)
    response = client.post(CLAIM, {"do": "claim"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    box = parse(response.content).find(id="claim")
    assert box.find("b", data_testid="claim-user").text == "rita"
    assert [b.attrs["value"] for b in box.find_all("button")] == ["renew", "release"]
    assert CLAIM_NOTICES["claim"] in inline_text(box)
    # a decision releases the claim (decisions.md): the notice says so (found by the newcomer run)
    assert (
        CLAIM_NOTICES["claim"]
        == "You have claimed this pile for 15 minutes, or until your next decision on it."
    )
    row = PileClaim.objects.get()
    assert (row.user, row.expires_at - row.claimed_at) == (reviewer, timedelta(minutes=15))


def test_renew_then_release_through_plain_posts(pile, client, reviewer):
    client.force_login(reviewer)
    claim_for(reviewer, minutes_ago=10)
    before = PileClaim.objects.get().expires_at
    response = client.post(CLAIM, {"do": "renew"}, follow=True)
    assert CLAIM_NOTICES["renew"] in response.content.decode()
    assert PileClaim.objects.get().expires_at - before >= timedelta(minutes=10)
    client.post(CLAIM, {"do": "release"})
    assert PileClaim.objects.count() == 0
    assert claim_box(client)[1] == ["claim"]


def test_an_unknown_claim_action_is_refused_with_422(pile, client, reviewer):
    client.force_login(reviewer)
    response = client.post(CLAIM, {"do": "steal"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "Choose claim, renew or release." in inline_text(parse(response.content).find(id="claim"))


def test_a_viewer_sees_the_claim_without_buttons_and_is_refused_403(pile, client, reviewer, viewer):
    claim_for(reviewer, minutes_ago=4)
    client.force_login(viewer)
    text, buttons = claim_box(client)
    assert buttons == []
    assert text.startswith("claimed by rita since ")
    assert "(4 min ago)" in text and text.endswith("Anyone may still act on it.")
    assert client.post(CLAIM, {"do": "claim"}).status_code == 403
    assert PileClaim.objects.get().user == reviewer


def test_a_second_reviewer_sees_the_first_claim_can_still_retire_and_the_first_decision_releases_it(
    pile, client, reviewer, second_reviewer
):
    claim_for(reviewer, minutes_ago=2)
    client.force_login(second_reviewer)
    text, buttons = claim_box(client)
    assert buttons == [] and "claimed by rita since" in text and "(2 min ago)" in text
    refused = client.post(CLAIM, {"do": "claim"}, HTTP_HX_REQUEST="true")
    claim = PileClaim.objects.get()
    assert refused.status_code == 422
    assert CLAIM_HELD_BY_OTHER.format(
        holder="rita",
        since=claim.claimed_at.strftime("%Y-%m-%d %H:%M"),
        until=claim.expires_at.strftime("%Y-%m-%d %H:%M"),
    ) in inline_text(parse(refused.content).find(id="claim"))
    retired = client.post(
        f"/pile/retire/?{ENTITY}",
        {"members": [pile[0]], "reason": "restates", "pile_version": version(client)},
    )
    assert retired.status_code == 302
    assert Lesson.objects.get(hash=pile[0]).status == "retracted"
    assert PileClaim.objects.get().user == reviewer  # rob's decision leaves rita's claim
    client.force_login(reviewer)
    client.post(
        f"/pile/retire/?{ENTITY}",
        {"members": [pile[1]], "reason": "restates", "pile_version": version(client)},
    )
    assert PileClaim.objects.count() == 0
    assert claim_box(client)[0].startswith("Nobody has claimed this pile.")


def test_an_expired_claim_is_shown_as_none(pile, client, reviewer, second_reviewer):
    claim_for(reviewer, minutes_ago=15)
    client.force_login(second_reviewer)
    assert claim_box(client) == ("Nobody has claimed this pile. Claim for 15 min", ["claim"])


def _queue_with_piles(ingest):
    from tests.builders import numbered_lesson

    records = [{"type": "host", "name": "acme", "max_active": 1, "budget_enabled": True}]
    records.append({"type": "host", "name": "zeta", "max_active": 1, "budget_enabled": True})
    for subject in ("invoice_capture", "orders", "refunds"):
        records += [numbered_lesson(i, namespace="desk.test", subject=subject) for i in range(3)]
    # the same entity name on another host: acme's claim is not its claim
    records += [numbered_lesson(i, namespace="desk.test", subject="orders", host="zeta") for i in range(3)]
    report = ingest(records)
    assert report.ok, report.error_lines()


def queue_marks(client) -> dict[str, str]:
    page = parse(client.get("/").content)
    marks = {}
    for row in page.find("table", cls="queue-table").find("tbody").find_all("tr"):
        host, td = row.find_all("td")[0].text, row.find("td", cls="target")
        mark = td.find("span", cls="claim-mark")
        marks[f"{host} {td.find('a').text.replace(chr(0x200B), '')}"] = mark.text if mark else ""
    return marks


def test_the_queue_marks_claimed_piles_with_who_and_how_long_ago(
    ingest, client, viewer, reviewer, second_reviewer
):
    _queue_with_piles(ingest)
    claim_for(reviewer, minutes_ago=4)
    claim_for(second_reviewer, minutes_ago=0, subject="refunds")
    client.force_login(viewer)
    assert queue_marks(client) == {
        "acme entity:desk.test/invoice_capture": "claimed by rita, 4 min ago",
        "acme entity:desk.test/orders": "",
        "acme entity:desk.test/refunds": "claimed by rob, 0 min ago",
        "zeta entity:desk.test/orders": "",
    }


def test_the_queue_leaves_expired_claims_and_other_hosts_entities_unmarked(ingest, client, viewer, reviewer):
    _queue_with_piles(ingest)
    claim_for(reviewer, minutes_ago=15)  # CLAIM_MINUTES ago: expired
    claim_for(reviewer, minutes_ago=2, subject="orders")
    client.force_login(viewer)
    assert queue_marks(client) == {
        "acme entity:desk.test/invoice_capture": "",
        "acme entity:desk.test/orders": "claimed by rita, 2 min ago",
        "acme entity:desk.test/refunds": "",
        "zeta entity:desk.test/orders": "",
    }


def test_the_queue_query_count_is_the_same_with_and_without_claims(
    ingest, client, viewer, reviewer, second_reviewer, django_assert_num_queries
):
    _queue_with_piles(ingest)
    client.force_login(viewer)
    client.get("/")  # the session and permission caches, as on any later page
    with django_assert_num_queries(QUEUE_MAX_QUERIES) as unclaimed:
        client.get("/")
    for user, subject in ((reviewer, "invoice_capture"), (second_reviewer, "orders"), (reviewer, "refunds")):
        claim_for(user, subject=subject)
    with django_assert_num_queries(len(unclaimed.captured_queries)):
        response = client.get("/")
    assert response.content.decode().count('data-testid="claim-mark"') == 3
