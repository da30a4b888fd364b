"""Locust users for ``bench/locust_run.py``: signed-in reviewers over the queue, pile and lesson pages.

Each user takes its own signed-in session (made by the runner), then, after 0.5-1.5 s of thought each
time, requests the queue (1 in 5 requests), a pile (2 in 5) or a lesson (2 in 5), the piles and lessons
drawn from the JSON file named by ``LPR_BENCH_TARGETS`` (``{"piles": [query strings], "lessons":
[paths], "sessions": [session ids]}``). A request slower than 60 s counts as failed.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path

from locust import HttpUser, between, task

TARGETS = json.loads(Path(os.environ["LPR_BENCH_TARGETS"]).read_text())
SESSIONS = itertools.cycle(TARGETS["sessions"])
TIMEOUT = 60


class Reviewer(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", next(SESSIONS))

    @task(1)
    def queue(self) -> None:
        self.client.get("/", name="queue", timeout=TIMEOUT)

    @task(2)
    def pile(self) -> None:
        self.client.get(f"/pile/?{random.choice(TARGETS['piles'])}", name="pile", timeout=TIMEOUT)

    @task(2)
    def lesson(self) -> None:
        self.client.get(random.choice(TARGETS["lessons"]), name="lesson", timeout=TIMEOUT)
