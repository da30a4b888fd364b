"""Locust users for ``bench/locust_run.py``: signed-in reviewers over the queue, pile and lesson pages.

Each user takes its own signed-in session (made by the runner), then, after 0.5-1.5 s of thought each
time, requests the queue (1 in 5 requests), a pile (2 in 5) or a lesson (2 in 5), the piles and lessons
drawn from the JSON file named by ``LPR_BENCH_TARGETS`` (``{"piles": [query strings], "lessons":
[paths], "sessions": [session ids]}``). A request slower than 60 s counts as failed.

``locust_run.py --extra`` adds, each with weight 1, ``"api"``: ``GET /api/v1/piles?limit=100`` with the
bearer token in ``"token"``; ``"log"``: the decision log; ``"deep"``: the queue page in ``"deep"`` (page
50, found by following its next links).
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path

from locust import HttpUser, between

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


EXTRA = {"api": api_piles, "log": decision_log, "deep": queue_deep}


class Reviewer(HttpUser):
    wait_time = between(0.5, 1.5)
    # the mix (queue 1 in 5, pile and lesson 2 in 5 each), then any --extra page with weight 1
    tasks = {queue: 1, pile: 2, lesson: 2} | {EXTRA[name]: 1 for name in TARGETS.get("extra", [])}

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", next(SESSIONS))
