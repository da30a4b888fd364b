"""Finding 9: one recurrence wording everywhere: "shown in N sessions", "not shown in any session yet"."""

import pytest

from review.web.format import shown_in


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "not shown in any session yet"),
        (None, "not shown in any session yet"),
        (1, "shown in 1 session"),
        (12, "shown in 12 sessions"),
    ],
)
def test_shown_in(n, text):
    assert shown_in(n) == text


def test_the_recurrence_cell_says_not_shown_in_any_session_yet_for_zero(db):
    from django.template.loader import render_to_string

    from lessons.core.recurrence import COUNT_FIELDS

    counts = dict.fromkeys(COUNT_FIELDS, 0)
    html = render_to_string("review/shared/_recurrence.html", {"counts": counts})
    assert "not shown in any session yet" in html
    assert "no exposure recorded" not in html
