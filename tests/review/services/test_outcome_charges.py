"""The kept counted corrections and session ends (``review.services.outcome_charges``,
``lessons.recurrence.session_ends``): a refresh that reads only what changed since the last one stores what
a refresh reading the host's whole history would (docs/decisions.md, "Outcomes"), after any sequence of
batches (new sessions, old sessions again, corrections on and off the retired lessons' topics, at equal
times), retires, restores, verdicts and a lesson that joins a fact; on both databases."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from unittest.mock import ANY

import numpy as np
import pytest

from lessons.core.outcomes import OUTCOMES_VERSION
from lessons.core.text import lesson_hash
from lessons.models import Host, Lesson, SessionEnd, SessionEndsKept
from lessons.recurrence.versions import plain_rows
from review.models import Decision, DecisionOutcome, OutcomeKey, OutcomeMark
from review.services.decisions import lesson_restore, lessons_retire
from review.services.outcome_charges import AGAINST, Packed
from review.services.outcomes import _READ, JUDGED, STORED, host_outcomes, outcomes_refresh, revised
from tests.builders import correction, exposure, lesson

HOST, NS = "diff", "desk.diff"
T0 = datetime(2026, 2, 1, tzinfo=UTC)
TEXTS = {
    "invoice_capture": [
        "Copy the `contract_number` character for character; never drop leading zeros.",
        "Keep the leading zeros of the `contract_number` exactly as printed.",
        "Write the `gross_amount` as a bare number with two decimals.",
        "State the `gross_amount` with exactly two decimals, no currency sign.",
        "Name the `advertiser` as printed on the invoice header.",
    ],
    "po_matching": ["Match the `po_number` against the purchase order list before approving."],
}
# joins the contract_number fact of invoice_capture when a scenario brings it
LATE = ("invoice_capture", "Never drop the leading zeros from the `contract_number` field.")
SAID = [
    "You dropped the leading zeros of the contract_number again",
    "The gross_amount needs two decimals, not one",
    "The advertiser name was wrong on the invoice header",
    "po_number mismatch against the purchase order list",
    "Unrelated: the date format was off",
]
VERDICTS = ["held", "regressed", "drifted", "held_costlier"]


def iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _judged_rows(host: Host) -> list[tuple]:
    decisions = Decision.objects.filter(host=host.name, action__in=JUDGED).order_by()
    return plain_rows(decisions.values_list(*_READ, *(f"outcome__{name}" for name in STORED)))


def assert_as_if_read_afresh(host: Host) -> None:
    """Every judged decision has a stored outcome that a refresh reading the host's history afresh would
    not revise."""
    rows = _judged_rows(host)
    judgement = host_outcomes(host=host, decisions=rows)
    for i, row in enumerate(rows):
        found = judgement.of(i)
        stored = row[len(_READ) :]
        assert stored[0] is not None, f"decision id {row[0]} not judged"
        said = (found.outcome.outcome, found.digest, OUTCOMES_VERSION)
        assert not revised(said, found.sessions_after, stored), (row, found)


def kept_state(host: Host) -> tuple:
    """The kept rows as comparable lists: each key with its corrections (id, time, session name), and
    the session ends."""
    names = dict(SessionEnd.objects.filter(host=host).values_list("id", "session"))
    keys = []
    for kind, key_hash, floor, basis, *columns in OutcomeKey.objects.filter(host=host).values_list(
        "kind", "lesson_hash", "floor_ms", "basis", "corrections", "times", "sessions"
    ):
        packed = Packed.decode(*columns)
        rows = [
            (int(i), int(t), names[int(c)])
            for i, t, c in zip(packed.ids, packed.times, packed.sessions, strict=True)
        ]
        keys.append((kind, key_hash, floor, basis, rows))
    return sorted(keys), sorted(SessionEnd.objects.filter(host=host).values_list("session", "last_ms"))


class Scenario:
    """A seeded sequence of batches and decisions on host ``diff``."""

    def __init__(self, seed: int, ingest, reviewer) -> None:
        self.rng = random.Random(seed)
        self.ingest, self.reviewer = ingest, reviewer
        self.corrections = 0
        self.clock = T0
        self.late = False
        records = [{"type": "host", "name": HOST, "max_active": 8, "budget_enabled": False}]
        for subject, texts in TEXTS.items():
            for i, text in enumerate(texts):
                records.append(lesson(host=HOST, namespace=NS, subject=subject, text=text, created_at=i + 1))
        assert ingest(records).ok
        self.host = Host.objects.get(name=HOST)

    def _time(self) -> datetime:
        # corrections and exposures land before and after the decisions, some on the same millisecond
        return T0 + timedelta(hours=self.rng.choice([-12, 3, 20, 20, 47.5, 90, 150, 200, 260]))

    def batch(self) -> None:
        hashes = list(Lesson.objects.filter(host=self.host).values_list("hash", flat=True))
        records = []
        for _ in range(self.rng.randint(1, 3)):
            session = f"s{self.rng.randint(0, 9)}"  # old sessions come back
            when = self._time()
            for _ in range(self.rng.randint(1, 3)):
                records.append(
                    exposure(host=HOST, session=session, shown_at=iso(when), lesson=self.rng.choice(hashes))
                )
            for _ in range(self.rng.randint(0, 2)):
                self.corrections += 1
                later = when + timedelta(minutes=self.rng.choice([1, 1, 5]))
                records.append(
                    correction(
                        host=HOST,
                        session=session,
                        id=f"c{self.corrections}",
                        text=self.rng.choice(SAID),
                        corrected_at=iso(later),
                    )
                )
        assert self.ingest(records).ok

    def decide(self) -> None:
        self.clock += timedelta(hours=self.rng.choice([1, 10, 30]))
        lessons = list(Lesson.objects.filter(host=self.host).order_by("id"))
        live = [x for x in lessons if x.status == "live"]
        retired = [x for x in lessons if x.status == "retired"]
        if retired and (not live or self.rng.random() < 0.35):
            lesson_restore(
                lesson=self.rng.choice(retired), actor=self.reviewer, reason="back", now=self.clock
            )
        elif live:
            pick = self.rng.choice(live)
            lessons_retire(
                host=self.host, hashes=[pick.hash], actor=self.reviewer, reason="restates", now=self.clock
            )

    def verdict(self) -> None:
        pick = self.rng.choice(list(Lesson.objects.filter(host=self.host).values_list("hash", flat=True)))
        record = {
            "type": "verdict",
            "host": HOST,
            "lesson": pick,
            "metric": "field_accuracy",
            "verdict": self.rng.choice(VERDICTS),
            "measured_at": iso(self._time()),
        }
        assert self.ingest([record]).ok

    def join(self) -> None:
        if not self.late:
            self.late = True
            subject, text = LATE
            assert self.ingest(
                [lesson(host=HOST, namespace=NS, subject=subject, text=text, created_at=99)]
            ).ok

    def step(self) -> None:
        action = self.rng.choice(["batch", "batch", "batch", "decide", "decide", "verdict", "join"])
        getattr(self, action)()


@pytest.mark.parametrize("seed", range(8))
def test_a_refresh_of_what_changed_stores_what_a_whole_read_would(seed, ingest, reviewer, settings):
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(seed, ingest, reviewer)
    for n in range(14):
        scenario.step()
        outcomes_refresh(host=scenario.host)  # what a decision leaves to the next refresh, done now
        if not Decision.objects.filter(host=HOST, action__in=JUDGED).exists():
            continue
        assert_as_if_read_afresh(scenario.host)
        if n % 5 == 4:  # the kept rows are what a build from nothing makes
            kept = kept_state(scenario.host)
            outcomes_refresh(host=scenario.host, full=True)
            assert kept_state(scenario.host) == kept
    assert (
        DecisionOutcome.objects.filter(host=HOST).count()
        == Decision.objects.filter(host=HOST, action__in=JUDGED).count()
    )


def h(subject: str, text: str) -> str:
    return lesson_hash(NS, subject, text)


def test_a_refresh_reads_only_the_sessions_attributed_since_the_last(ingest, reviewer, settings):
    """Exact rows: the first refresh builds the kept state; a batch on a new session adds its counted
    correction to the retired lesson's rows and its end; a second refresh with nothing new changes
    nothing."""
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(0, ingest, reviewer)
    retired = h("invoice_capture", TEXTS["invoice_capture"][0])
    (decision,) = lessons_retire(host=scenario.host, hashes=[retired], actor=reviewer, reason="x", now=T0)
    assert outcomes_refresh(host=scenario.host) == 1
    assert SessionEndsKept.objects.filter(host=scenario.host).exists()
    assert list(
        OutcomeKey.objects.filter(host=scenario.host).values_list("kind", "lesson_hash", "floor_ms")
    ) == [(AGAINST, retired, int(T0.timestamp() * 1000))]
    assert kept_state(scenario.host)[0] == [(AGAINST, retired, int(T0.timestamp() * 1000), ANY, [])]
    when = T0 + timedelta(hours=5)
    assert ingest(
        [
            exposure(
                host=HOST, session="n1", shown_at=iso(when), lesson=h("po_matching", TEXTS["po_matching"][0])
            ),
            correction(
                host=HOST, session="n1", id="x1", text=SAID[0], corrected_at=iso(when + timedelta(minutes=1))
            ),
            correction(
                host=HOST, session="n1", id="x2", text=SAID[1], corrected_at=iso(when + timedelta(minutes=2))
            ),
        ]
    ).ok
    x1 = scenario.host.corrections.get(ext_id="x1").id
    at = int((when + timedelta(minutes=1)).timestamp() * 1000)
    assert kept_state(scenario.host)[0] == [
        (AGAINST, retired, int(T0.timestamp() * 1000), ANY, [(x1, at, "n1")])
    ]
    assert list(SessionEnd.objects.filter(host=scenario.host).values_list("session", "last_ms")) == [
        ("n1", int((when + timedelta(minutes=2)).timestamp() * 1000))
    ]
    row = DecisionOutcome.objects.get(decision=decision)
    assert (row.outcome, row.sessions_after, row.evidence["corrections_total"]) == ("too_early", 1, 1)
    mark = OutcomeMark.objects.get(host=scenario.host).attribution
    assert outcomes_refresh(host=scenario.host) == 0
    assert OutcomeMark.objects.get(host=scenario.host).attribution == mark


def test_packed_corrections_merge_in_time_order_each_once():
    """Two lessons' kept corrections (a roll back's members) merge by (time, id), a correction in both
    once, and survive their stored form."""
    a = Packed(*(np.array(x, dtype=np.int64) for x in ([5, 9], [100, 300], [1, 2])))
    b = Packed(*(np.array(x, dtype=np.int64) for x in ([7, 9, 3], [100, 300, 400], [1, 2, 3])))
    merged = a.merged(b)
    assert [c.tolist() for c in merged] == [[5, 7, 9, 3], [100, 100, 300, 400], [1, 1, 2, 3]]
    again = Packed.decode(*(memoryview(column) for column in merged.encoded()))
    assert [c.tolist() for c in again] == [c.tolist() for c in merged]


def test_session_ends_no_longer_kept_rebuild_the_kept_rows(ingest, reviewer, settings):
    """A host whose session ends stopped being kept (the row removed) is built afresh at its next refresh,
    not read from ends that fell behind."""
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(1, ingest, reviewer)
    retired = h("invoice_capture", TEXTS["invoice_capture"][2])
    lessons_retire(host=scenario.host, hashes=[retired], actor=reviewer, reason="x", now=T0)
    outcomes_refresh(host=scenario.host)
    SessionEndsKept.objects.filter(host=scenario.host).delete()
    scenario.batch()  # its sessions' ends are not written
    outcomes_refresh(host=scenario.host)
    assert SessionEndsKept.objects.filter(host=scenario.host).exists()
    assert_as_if_read_afresh(scenario.host)
    kept = kept_state(scenario.host)
    outcomes_refresh(host=scenario.host, full=True)
    assert kept_state(scenario.host) == kept


def test_a_contradicted_retire_whose_later_sessions_stop_counting_is_judged_again(ingest, reviewer, settings):
    """Its first ten corrections in one session, the second session after them: when that session is
    attributed again and its correction no longer counts (a lesson of another entity on the topic was
    shown before it), the retire is corrected in one session only: too early, not left contradicted."""
    settings.OUTCOME_SUPPORT_SESSIONS = 30
    scenario = Scenario(2, ingest, reviewer)
    retired = h("invoice_capture", TEXTS["invoice_capture"][0])
    other = "Keep the leading zeros of the `contract_number` on every purchase order."
    assert ingest([lesson(host=HOST, namespace=NS, subject="po_matching", text=other, created_at=50)]).ok
    (decision,) = lessons_retire(host=scenario.host, hashes=[retired], actor=reviewer, reason="x", now=T0)
    rows = [
        correction(
            host=HOST,
            session="a",
            id=f"a{n}",
            text=SAID[0],
            corrected_at=iso(T0 + timedelta(hours=1, minutes=n)),
        )
        for n in range(10)
    ]
    rows.append(
        correction(host=HOST, session="b", id="b1", text=SAID[0], corrected_at=iso(T0 + timedelta(hours=3)))
    )
    assert ingest(rows).ok
    row = DecisionOutcome.objects.get(decision=decision)
    assert (row.outcome, row.evidence["corrections_total"]) == ("contradicted", 11)
    shown = iso(T0 + timedelta(hours=2, minutes=59))
    assert ingest([exposure(host=HOST, session="b", shown_at=shown, lesson=h("po_matching", other))]).ok
    row = DecisionOutcome.objects.get(decision=decision)
    assert (row.outcome, row.evidence["corrections_total"]) == ("too_early", 10)
    assert_as_if_read_afresh(scenario.host)
