"""``manage.py demo``: loads the demo corpus and users and prints the logins with the address the server
listens on (``make run`` passes its PORT: a newcomer on another port was shown :8000)."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command


def run(**options) -> list[str]:
    out = StringIO()
    call_command("demo", stdout=out, **options)
    return out.getvalue().splitlines()


def test_the_logins_name_the_address_make_run_serves(db):
    lines = run(url="http://127.0.0.1:8123/")
    assert lines[0].startswith("demo corpus: ")
    assert lines[1:] == [
        "demo logins (http://127.0.0.1:8123/):",
        "  viewer    password viewer-demo-pass     role viewer",
        "  reviewer  password reviewer-demo-pass   role reviewer",
        "  admin     password admin-demo-pass      role admin",
        "  priya     password priya-demo-pass      role reviewer",
    ]


def test_the_default_address_is_the_development_server(db):
    assert run()[1] == "demo logins (http://127.0.0.1:8000/):"


def test_the_demo_holds_the_ad_buy_desk_and_its_invoice_capture_pile(db):
    """Newcomer item: the pile the product's own docs tell about is in the `make run` demo."""
    from lessons.models import EntityCount

    run()
    pile = EntityCount.objects.get(host__name="adbuy-desk", subject="invoice_capture")
    assert (pile.namespace, pile.live, pile.over_budget, pile.overage) == ("desk.adbuy", 10, True, 2)


def test_loading_the_demo_again_says_which_lesson_a_reviewer_decided_since(db, reviewer):
    """Newcomer finding: a second `make run` printed "1 held" without saying what or why."""
    from lessons.models import Lesson
    from review.services.decisions import lessons_retire

    run()
    lesson = Lesson.objects.filter(host__name="adbuy-desk", subject="invoice_capture", status="live").first()
    lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason="Restates another rule.")
    lines = run()
    assert lines[0].startswith("demo corpus: ") and ", 1 held, " in lines[0]
    assert lines[1] == (
        f"  held: lesson {lesson.hash[:8]} on adbuy-desk: stays retracted (the source says live; a reviewer's"
        " decision is newer)"
    )
    assert lines[2] == "demo logins (http://127.0.0.1:8000/):"
