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
from hypothesis import given
from hypothesis import settings as settings_
from hypothesis import strategies as st

from lessons.core.outcomes import OUTCOMES_VERSION
from lessons.core.text import lesson_hash
from lessons.models import Host, Lesson, SessionEnd, SessionEndsKept
from lessons.recurrence.versions import plain_rows
from review.models import Decision, DecisionOutcome, OutcomeKey, OutcomeMark
from review.services import outcome_charges
from review.services import outcomes as outcomes_module
from review.services.decisions import lesson_restore, lessons_retire
from review.services.outcome_charges import AGAINST, KeptCharges, Packed, first_part_written, parts_kept
from review.services.outcomes import _READ, JUDGED, STORED, host_outcomes, outcomes_refresh, revised
from tests.builders import correction, exposure, lesson
from tests.review.services.test_calibration_rollup import grouped_outcomes, rollup

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
        assert not revised(said, stored), (row, found)


def kept_state(host: Host) -> tuple:
    """The kept rows as comparable lists: each key with its corrections (id, time, session name), and
    the session ends."""
    names = dict(SessionEnd.objects.filter(host=host).values_list("id", "session"))
    keys = []
    for (kind, key_hash), (floor, basis, packed, _parts) in parts_kept(host).items():
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
        assert rollup() == grouped_outcomes()  # its counts moved by each refresh, as if grouped afresh
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


@pytest.mark.parametrize(
    ("parts", "times", "changed_from", "total", "first"),
    [
        ((3,), [10, 20, 30], 40, 4, 1),  # appended after a part larger than what is new: a part of its own
        ((3, 1), [10, 20, 30, 40], 50, 5, 1),  # a part no larger than what follows it is rewritten with it
        ((3, 2), [10, 20, 30, 40, 50], 60, 6, 2),
        ((3, 2, 1), [10, 20, 30, 40, 50, 60], 70, 7, 0),  # each part no larger than all after it: one part
        ((4, 2, 1), [10, 20, 30, 40, 50, 60, 70], 55, 7, 1),  # changed within the second part: its start
        ((4, 2, 1), [10, 20, 30, 40, 50, 60, 70], 50, 6, 1),  # ...at its first time exactly (dropped)
        ((4, 2, 1), [10, 20, 30, 40, 50, 60, 70], 40, 8, 0),  # at the first part's last time
        ((4, 2, 1), [10, 20, 30, 40, 50, 60, 70], 45, 11, 0),  # more after it than the first part holds
        ((0,), [], 10, 2, 0),  # an empty key (its row kept): rewritten
    ],
)
def test_the_part_a_refresh_rewrites(parts, times, changed_from, total, first):
    assert first_part_written(parts, np.array(times, dtype=np.int64), changed_from, total) == first


def test_a_refresh_writes_the_part_its_batch_changed_not_the_lessons_history(
    ingest, reviewer, settings, monkeypatch
):
    """A retired lesson's counted corrections are kept in parts: a batch of new sessions adds a part or
    rewrites the last ones (no larger than what follows them), never the parts before; a session attributed
    again rewrites from the part that holds it. Joined, the parts are what a build from nothing keeps."""
    settings.OUTCOME_SUPPORT_SESSIONS = 30
    scenario = Scenario(3, ingest, reviewer)
    retired = h("invoice_capture", TEXTS["invoice_capture"][0])
    lessons_retire(host=scenario.host, hashes=[retired], actor=reviewer, reason="x", now=T0)

    def said(session: str, n: int, hours: int) -> None:
        at = T0 + timedelta(hours=hours)
        rows = [
            correction(
                host=HOST,
                session=session,
                id=f"{session}{i}",
                text=SAID[0],
                corrected_at=iso(at + timedelta(minutes=i)),
            )
            for i in range(n)
        ]
        assert ingest(rows).ok

    written: list[list[int]] = []  # the lesson's parts each refresh wrote
    store = OutcomeKey.objects.bulk_create

    def spy(rows, **kwargs):
        written.append([row.part for row in rows if (row.kind, row.lesson_hash) == (AGAINST, retired)])
        return store(rows, **kwargs)

    monkeypatch.setattr(OutcomeKey.objects, "bulk_create", spy)

    def parts() -> list[int]:
        rows = OutcomeKey.objects.filter(host=scenario.host, kind=AGAINST, lesson_hash=retired).order_by(
            "part"
        )
        return [len(times) // 8 for times in rows.values_list("times", flat=True)]

    said("a", 6, 1)
    assert (parts(), written[-1]) == ([6], [0])
    said("b", 1, 2)
    assert (parts(), written[-1]) == ([6, 1], [1])
    said("c", 1, 3)
    assert (parts(), written[-1]) == ([6, 2], [1])
    said("d", 1, 4)
    assert (parts(), written[-1]) == ([6, 2, 1], [2])
    said("e", 1, 5)  # the last two parts (1 <= 1, 2 <= 2) and the new one: one part, part 0 not written
    assert (parts(), written[-1]) == ([6, 4], [1])
    # session "a" shown a lesson of another topic: attributed again, its corrections counted again
    shown = iso(T0 + timedelta(hours=1, minutes=30))
    assert ingest(
        [exposure(host=HOST, session="a", shown_at=shown, lesson=h("po_matching", TEXTS["po_matching"][0]))]
    ).ok
    assert (parts(), written[-1]) == ([10], [0])
    assert_as_if_read_afresh(scenario.host)
    kept = kept_state(scenario.host)
    outcomes_refresh(host=scenario.host, full=True)
    assert kept_state(scenario.host) == kept


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


def _kept(times: list[int], sessions: list[int], changed_from: int) -> KeptCharges:
    """A ``KeptCharges`` as a refresh leaves it for one key whose corrections changed from ``changed_from``
    (epoch ms), without a database: what ``settled`` and ``unsettled`` read."""
    kept = KeptCharges.__new__(KeptCharges)
    ids = np.arange(len(times), dtype=np.int64)
    kept.packed = {KEY: Packed(ids, np.array(times, dtype=np.int64), np.array(sessions, dtype=np.int64))}
    kept.changed_from, kept.fresh = {KEY: changed_from}, set()
    return kept


KEY = (AGAINST, "k")


@settings_(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 2)), max_size=30),
    st.integers(0, 45),
)
def test_unsettled_ranges_hold_exactly_the_contradicted_retires_not_settled(corrections, changed):
    """The ranges of retire times the database is asked for (``unsettled``) hold a retire exactly when
    ``settled`` says its contradicted outcome may change: every time around every correction's, on random
    kept corrections (equal times, runs of one session, fewer than ten before the change)."""
    corrections.sort()
    times, sessions = [t * 10 for t, _s in corrections], [s for _t, s in corrections]
    kept = _kept(times, sessions, changed * 10)
    ranges = kept.unsettled(KEY)
    asked = sorted({-1, 500, *(t + d for t in times for d in (-1, 0, 1))})
    inside = [
        any((low is None or at >= low) and (high is None or at < high) for low, high in ranges)
        for at in asked
    ]
    settled = kept.settled(KEY, np.array(asked, dtype=np.int64)).tolist()
    assert inside == [not done for done in settled]


def test_unsettled_ranges_of_one_session_runs_and_the_change():
    """Exact ranges: twelve corrections before the change at 200, the first eleven in session 1: a retire
    before the third correction lists ten of one session (ranges up to it), one from the tenth before the
    change on lists a changed one."""
    times = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 200]
    sessions = [1] * 11 + [2, 3]
    kept = _kept(times, sessions, 200)
    assert kept.unsettled(KEY) == [(30, None), (None, 20)]
    assert kept.settled(KEY, np.array([5, 10, 19, 20, 29, 30], dtype=np.int64)).tolist() == [
        False,
        False,
        False,
        True,
        True,
        False,
    ]
    assert _kept(times[:5], sessions[:5], 200).unsettled(KEY) == [(None, None)]
    assert _kept(times, sessions, 0).unsettled(KEY) == [(None, None)]
    fresh = _kept(times, sessions, 200)
    fresh.changed_from = {}
    assert fresh.unsettled(KEY) is None


def test_a_refresh_reads_no_contradicted_retire_that_later_corrections_cannot_revise(
    ingest, reviewer, settings, monkeypatch
):
    """A retire contradicted by the ten corrections it lists (two sessions) is not read again when more
    corrections on its topic arrive; a later retire of the same lesson, whose ten include the new ones, is
    read and judged; the stored outcomes are those a whole read gives, and the refresh marks the log's seq."""
    settings.OUTCOME_SUPPORT_SESSIONS = 30
    scenario = Scenario(3, ingest, reviewer)
    retired = h("invoice_capture", TEXTS["invoice_capture"][0])
    (old,) = lessons_retire(host=scenario.host, hashes=[retired], actor=reviewer, reason="x", now=T0)
    rows = [
        correction(
            host=HOST,
            session=f"a{n % 2}",
            id=f"a{n}",
            text=SAID[0],
            corrected_at=iso(T0 + timedelta(hours=1, minutes=n)),
        )
        for n in range(12)
    ]
    assert ingest(rows).ok
    assert DecisionOutcome.objects.get(decision=old).outcome == "contradicted"
    restore = lesson_restore(
        lesson=Lesson.objects.get(hash=retired), actor=reviewer, reason="back", now=T0 + timedelta(hours=2)
    )
    (new,) = lessons_retire(
        host=scenario.host, hashes=[retired], actor=reviewer, reason="y", now=T0 + timedelta(hours=3)
    )
    outcomes_refresh(host=scenario.host)
    assert OutcomeMark.objects.get(host=scenario.host).decision_seq == new.seq
    assert ingest(corrections_on_topic("c", T0 + timedelta(hours=3, minutes=30))).ok
    assert DecisionOutcome.objects.get(decision=new).evidence["corrections_total"] == 2
    judged: list[list[int]] = []
    real = outcomes_module.host_outcomes

    def watched(*, host, decisions, kept=None):
        judged.append(sorted(row[0] for row in decisions))
        return real(host=host, decisions=decisions, kept=kept)

    monkeypatch.setattr(outcomes_module, "host_outcomes", watched)
    assert ingest(corrections_on_topic("b", T0 + timedelta(hours=4))).ok
    assert judged == [sorted([restore.id, new.id])]
    assert DecisionOutcome.objects.get(decision=new).evidence["corrections_total"] == 4
    # its total is dated by its computed_at: not rewritten for the four corrections after the ten it lists
    assert DecisionOutcome.objects.get(decision=old).evidence["corrections_total"] == 12
    assert_as_if_read_afresh(scenario.host)


def corrections_on_topic(prefix: str, at: datetime) -> list[dict]:
    """Two corrections on the contract_number topic, a minute apart, each in its own session."""
    return [
        correction(
            host=HOST,
            session=f"{prefix}{n}",
            id=f"{prefix}{n}",
            text=SAID[0],
            corrected_at=iso(at + timedelta(minutes=n)),
        )
        for n in range(2)
    ]


def test_with_another_count_of_sessions_no_contradicted_retire_is_taken_as_settled(monkeypatch):
    """``settled`` counts changes of session among the ten listed, which says "two sessions or more" and
    nothing else: were the rule's count of sessions another, every contradicted retire of a changed lesson
    is judged again (and asked of the database) rather than kept on a test that no longer holds."""
    kept = _kept([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 200], [1, 2] * 6 + [3], 200)
    assert kept.settled(KEY, np.array([5], dtype=np.int64)).tolist() == [True]
    monkeypatch.setattr(outcome_charges, "CONTRADICTED_SESSIONS", 3)
    assert kept.settled(KEY, np.array([5], dtype=np.int64)).tolist() == [False]
    assert kept.unsettled(KEY) == [(None, None)]
