"""Locust users for ``bench/locust_run.py``: signed-in reviewers over the queue, pile and lesson pages.

Each user takes its own signed-in session (made by the runner), then, after 0.5-1.5 s of thought each
time, requests the queue (1 in 5 requests), a pile (2 in 5) or a lesson (2 in 5), the piles and lessons
drawn from the JSON file named by ``LPR_BENCH_TARGETS`` (``{"piles": [query strings], "lessons":
[paths], "sessions": [session ids]}``). A request slower than 60 s counts as failed.

``locust_run.py --extra`` adds, each with weight 1, ``"api"``: ``GET /api/v1/piles?limit=100`` with the
bearer token in ``"token"``; ``"log"``: the decision log; ``"deep"``: the queue page in ``"deep"`` (page
50, found by following its next links); ``"filters"``: the queue filtered by a pile's host, or by a word
(``"words"``); ``"regions"``: a pile's htmx region (``HX-Request``, ``HX-Target: pile``), as the page's
own requests ask it; ``"conditional"``: the user's last pile asked again with the ``ETag`` it carried
(``If-None-Match``), as the htmx polls do: a 304 when nothing it shows changed. ``"writer"`` adds one more
user (``Writer``), a reviewer who every 2-4 s retires one of the lessons through the lesson page's form,
with a reason, then restores it the same way (issue 25's "a reviewer retiring through HTTP"): each of
those writes changes what that host's pages show.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
from pathlib import Path

from locust import HttpUser, between, task

TARGETS = json.loads(Path(os.environ["LPR_BENCH_TARGETS"]).read_text())
SESSIONS = itertools.cycle(TARGETS["sessions"])
TIMEOUT = 60


def queue(user: HttpUser) -> None:
    user.client.get("/", name="queue", timeout=TIMEOUT)


def pile(user: HttpUser) -> None:
    user.client.get(f"/pile/?{random.choice(TARGETS['piles'])}", name="pile", timeout=TIMEOUT)


def lesson(user: HttpUser) -> None:
    user.client.get(random.choice(TARGETS["lessons"]), name="lesson", timeout=TIMEOUT)


def api_piles(user: HttpUser) -> None:
    headers = {"Authorization": f"Bearer {TARGETS['token']}"}
    user.client.get("/api/v1/piles?limit=100", headers=headers, name="api piles", timeout=TIMEOUT)


def decision_log(user: HttpUser) -> None:
    user.client.get("/decisions/", name="decision log", timeout=TIMEOUT)


def queue_deep(user: HttpUser) -> None:
    user.client.get(TARGETS["deep"], name="queue deep page", timeout=TIMEOUT)


def queue_filtered(user: HttpUser) -> None:
    if random.random() < 0.5:
        host = random.choice(TARGETS["piles"]).split("&")[0]  # "host=..." as the pile's query string has it
        user.client.get(f"/?{host}", name="queue, host filter", timeout=TIMEOUT)
    else:
        word = random.choice(TARGETS["words"])
        user.client.get(f"/?q={word}", name="queue, text filter", timeout=TIMEOUT)


def pile_region(user: HttpUser) -> None:
    headers = {"HX-Request": "true", "HX-Target": "pile"}
    query = random.choice(TARGETS["piles"])
    user.client.get(f"/pile/?{query}", headers=headers, name="pile region (htmx)", timeout=TIMEOUT)


def pile_again(user: HttpUser) -> None:
    """The user's last pile asked again with its ETag (a first call asks it without one)."""
    last = getattr(user, "last_pile", None)
    if last is None:
        query = random.choice(TARGETS["piles"])
        response = user.client.get(f"/pile/?{query}", name="pile", timeout=TIMEOUT)
        user.last_pile = (query, response.headers.get("ETag", ""))
        return
    query, tag = last
    with user.client.get(
        f"/pile/?{query}",
        headers={"If-None-Match": tag},
        name="pile again (If-None-Match)",
        timeout=TIMEOUT,
        catch_response=True,
    ) as response:
        if response.status_code in (200, 304):
            response.success()
        user.last_pile = (query, response.headers.get("ETag", tag))


EXTRA = {
    "api": api_piles,
    "log": decision_log,
    "deep": queue_deep,
    "filters": queue_filtered,
    "regions": pile_region,
    "conditional": pile_again,
}


class Reviewer(HttpUser):
    wait_time = between(0.5, 1.5)
    # the mix (queue 1 in 5, pile and lesson 2 in 5 each), then any --extra page with weight 1
    tasks = {queue: 1, pile: 2, lesson: 2} | {
        EXTRA[name]: 1 for name in TARGETS.get("extra", []) if name in EXTRA
    }

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", next(SESSIONS))


_FIELD = r'name="{}" value="([^"]*)"'
VERSION = re.compile(_FIELD.format("pile_version"))
CSRF = re.compile(_FIELD.format("csrfmiddlewaretoken"))


if "writer" in TARGETS.get("extra", []):

    class Writer(HttpUser):
        """One reviewer deciding while the others read: retire a lesson through the lesson page's form,
        then restore it (the page's restore form), each with a reason and the pile version shown."""

        fixed_count = 1
        wait_time = between(2, 4)

        def on_start(self) -> None:
            self.client.cookies.set("sessionid", TARGETS["writer"])

        def _decide(self, path: str, action: str, reason: str) -> None:
            page = self.client.get(path, name="writer: lesson", timeout=TIMEOUT).text
            version, csrf = VERSION.search(page), CSRF.search(page)
            if version is None or csrf is None:  # already retired or restored by the last round: next
                return
            fields = {
                "reason": reason,
                "pile_version": version.group(1),
                "csrfmiddlewaretoken": csrf.group(1),
            }
            with self.client.post(
                f"{path}{action}/",
                data=fields,
                name=f"writer: {action}",
                timeout=TIMEOUT,
                allow_redirects=False,
                catch_response=True,
            ) as response:
                if response.status_code != 302:
                    response.failure(f"{action}: {response.status_code}")

        @task
        def retire_then_restore(self) -> None:
            path = random.choice(TARGETS["lessons"])
            self._decide(path, "retire", "load run: said by another rule")
            self._decide(path, "restore", "load run: needed after all")
