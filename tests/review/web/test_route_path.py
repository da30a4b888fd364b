"""route_path reverses a route once and fills its segment in: the same path as reverse() every time."""

from __future__ import annotations

import pytest
from django.urls import NoReverseMatch, reverse

from review.web.links import route_path

NAMES = ["bench-000", "a b", "ünï", "x%00y", "q?#&=+", "~:@!$'()*,;", "100%", "tab\there", "\x00"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("route", ["review:host", "review:host_budget"])
def test_route_path_is_the_path_reverse_gives(route, name):
    assert route_path(route, name=name) == reverse(route, kwargs={"name": name})


def test_route_path_of_a_route_without_segment_is_reverse():
    assert route_path("review:pile") == reverse("review:pile") == "/pile/"


@pytest.mark.parametrize("name", ["", "a/b"])
def test_route_path_refuses_what_reverse_refuses(name):
    with pytest.raises(NoReverseMatch):
        route_path("review:host", name=name)
