"""Decisions, their hash chain, host acknowledgements, API tokens and pile claims. docs/decisions.md.

A ``Decision`` row is written once, in the same transaction as the change it records, and never
updated or deleted (the admin shows it read-only). A host's acknowledgement is a separate row so
the record and its hash stay untouched.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Action(models.TextChoices):
    RETIRE = "retire"
    RESTORE = "restore"
    APPROVE = "approve_consolidation"
    REJECT = "reject_consolidation"
    ROLLBACK = "rollback_consolidation"
    SET_BUDGET = "set_budget"


class ReasonCode(models.TextChoices):
    """docs/decisions.md, "The record". Labels are the code's words in lower case (every form, filter and page
    shows
    them); the record and the exports keep the value."""

    DUPLICATE = "duplicate", "duplicate"
    RESTATES_ANOTHER = "restates_another", "restates another"
    REGRESSED = "regressed", "regressed"
    DRIFTED = "drifted", "drifted"
    RECURRING = "recurring", "recurring"
    OBSOLETE = "obsolete", "obsolete"
    TOO_SPECIFIC = "too_specific", "too specific"
    OTHER = "other", "other"


NO_REASON_CODE = "(no code)"  # how a decision without a reason code is shown (forms, filters, pages)


class Decision(models.Model):
    """One reviewer decision, hash-chained to the one before. docs/decisions.md, "The record"."""

    seq = models.PositiveBigIntegerField(unique=True)
    at = models.DateTimeField()
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=32, choices=Action.choices)
    host = models.CharField(max_length=64)
    namespace = models.CharField(max_length=200, null=True, blank=True)
    subject = models.CharField(max_length=200, null=True, blank=True)
    lesson_hash = models.CharField(max_length=64, null=True, blank=True)
    lesson_id = models.CharField(max_length=200, null=True, blank=True)
    store = models.CharField(max_length=200, null=True, blank=True)
    draft_id = models.CharField(max_length=200, null=True, blank=True)
    created_hash = models.CharField(max_length=64, null=True, blank=True)
    batch = models.CharField(max_length=64)
    reason_code = models.CharField(max_length=32, choices=ReasonCode.choices, null=True, blank=True)
    reason = models.TextField()
    evidence = models.JSONField(default=dict)
    prev_hash = models.CharField(max_length=64, blank=True)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        permissions = [
            ("decide", "Can retire, restore and decide consolidations"),
            ("set_budget", "Can change a host's budget"),
            ("manage_tokens", "Can create and revoke API tokens"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=[a.value for a in Action]), name="decision_action_valid"
            ),
            models.CheckConstraint(condition=Q(seq__gte=1), name="decision_seq_positive"),
        ]
        indexes = [
            models.Index(fields=["host", "seq"], name="decision_host_seq"),
            models.Index(fields=["actor", "seq"], name="decision_actor_seq"),
            models.Index(fields=["action", "seq"], name="decision_action_seq"),
            # seq last: "the latest decision on a lesson" (the pile's restorable members, a correlated
            # subquery per member) is one index seek, not a walk of the host's whole log.
            models.Index(fields=["host", "lesson_hash", "seq"], name="decision_lesson_seq"),
            # "the latest decision on an entity" (what a pile page was built after, and what came since):
            # one index seek, not a filter of the host's whole log (210,000 decisions: 260 ms at 1M)
            models.Index(fields=["host", "namespace", "subject", "seq"], name="decision_entity_seq"),
            models.Index(fields=["host", "draft_id"], name="decision_draft"),
            # The log's batch filter and its links (issue 12, finding 10).
            models.Index(fields=["batch", "seq"], name="decision_batch_seq"),
            # the log's chart: which hosts have decisions in its window, and their rows, read from the index
            # alone (reason_code included: no table lookup per decision; issue 10, build 3)
            models.Index(fields=["host", "at", "reason_code"], name="decision_host_at"),
            # an outcome refresh's approves, restores and roll backs of one host (their verdicts are read
            # again each time), without a walk of the host's whole log (docs/decisions.md, "What a refresh
            # reads")
            models.Index(fields=["host", "action", "seq"], name="decision_host_action"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} by {self.actor}"


class DecisionOutcome(models.Model):
    """Did the decision help: its outcome, derived from what arrived after it (corrections, sessions,
    verdicts) by ``lessons.core.outcomes`` and stored by ``review.services.outcomes``. Never part of the
    hash-chained record; recomputed when new evidence arrives for the host. ``outcome``: supported,
    contradicted or too_early; ``sessions_after``: the host's sessions with activity after the decision;
    ``evidence``: the corrections and verdicts it rests on (ids, sessions, epoch ms UTC) and a sentence;
    ``digest``: of the kind and evidence; ``computed_at`` UTC, when it was last revised (``sessions_after``
    is the count then); ``version``: the rules' version. docs/decisions.md, "Outcomes".
    """

    class Kind(models.TextChoices):
        SUPPORTED = "supported", "supported"
        CONTRADICTED = "contradicted", "contradicted"
        TOO_EARLY = "too_early", "too early"

    decision = models.OneToOneField(
        Decision, on_delete=models.CASCADE, primary_key=True, related_name="outcome"
    )
    host = models.CharField(max_length=64)
    outcome = models.CharField(max_length=16, choices=Kind.choices)
    sessions_after = models.PositiveIntegerField(default=0)
    evidence = models.JSONField(default=dict)
    # lessons.core.outcomes.Outcome.digest of the kind and evidence: a refresh compares by it
    digest = models.CharField(max_length=16, default="")
    computed_at = models.DateTimeField()
    version = models.PositiveIntegerField()

    class Meta:
        indexes = [
            # the log's outcome filter and the revisit queue: newest first within an outcome
            models.Index(fields=["outcome", "decision"], name="outcome_kind_seq"),
            models.Index(fields=["host", "outcome"], name="outcome_host"),
        ]

    def __str__(self) -> str:
        return f"#{self.decision_id} {self.outcome}"


class OutcomeKey(models.Model):
    """The user corrections that an outcome rule counts for one lesson, kept between refreshes by
    ``review.services.outcome_charges``. ``kind`` ``AGAINST``: they count against retiring the lesson (on its
    topic, and unmatched or charged ``recurred`` to a lesson that keeps its fact); ``RECURRED``: they were
    charged ``recurred`` to it (what an approve, restore or roll back is judged by). Those after
    ``floor_ms`` (epoch ms, UTC: the oldest decision that asks for them), as of ``basis`` (a digest of the
    lesson's text and, for ``AGAINST``, of the lessons that keep its fact: when it changes they are counted
    again). Kept as three packed arrays of little-endian int64 in time order (``(at_ms, id)``): the
    corrections' ids, their times (epoch ms) and their sessions (``lessons.SessionEnd`` ids), cut in
    ``part``s (0, 1, …: each part's corrections after the previous part's), so that a refresh writes the
    part its batch changed, not a lesson's whole history (``review.services.outcome_charges.parts_kept``).
    ``floor_ms`` and ``basis`` are the same on every part of a lesson. docs/decisions.md, "Outcomes"."""

    AGAINST, RECURRED = 0, 1

    host = models.ForeignKey("lessons.Host", on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.PositiveSmallIntegerField()
    lesson_hash = models.CharField(max_length=64)
    floor_ms = models.BigIntegerField()
    basis = models.CharField(max_length=16)
    corrections = models.BinaryField(default=b"")
    times = models.BinaryField(default=b"")
    sessions = models.BinaryField(default=b"")
    part = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "kind", "lesson_hash", "part"], name="outcome_key_part")
        ]


class OutcomeMark(models.Model):
    """How far a host's outcome refresh has read: every ``CorrectionAttribution`` of the host up to id
    ``attribution`` (attributions are rewritten with new ids, under the host's lock, whenever a session is
    attributed again) and every decision up to ``decision_seq``. ``version``: of the kept rows' rules, and
    ``support_sessions``: the ``OUTCOME_SUPPORT_SESSIONS`` they were judged by; another of either is
    rebuilt."""

    host = models.OneToOneField("lessons.Host", on_delete=models.CASCADE, primary_key=True, related_name="+")
    attribution = models.BigIntegerField()
    version = models.PositiveIntegerField()
    # the log's last seq when the refresh read the host's decisions: every judged decision of the host up to
    # it has a stored outcome (the chain's head lock commits decisions in seq order)
    decision_seq = models.BigIntegerField(default=0)
    # the OUTCOME_SUPPORT_SESSIONS the host's outcomes were last judged by (0: not known); another judges
    # every decision of the host again
    support_sessions = models.PositiveIntegerField(default=0)


class CalibrationCount(models.Model):
    """How many of one reviewer's decisions of one month (``month``: its first day, UTC), on one host, with
    one reason code (``""`` for none) have one outcome: the calibration page's rollup (issue 24).

    Rebuilt for a host by ``review.services.outcomes.outcomes_refresh`` in the transaction that stores the
    host's outcomes (their only writer), so the page reads months x hosts x codes rows, not every
    decision's outcome (1M decisions: 3.7 s grouped per view). docs/decisions.md, "Outcomes".
    """

    actor = models.CharField(max_length=150)
    month = models.DateField()
    host = models.CharField(max_length=64)
    reason_code = models.CharField(max_length=32, blank=True, default="")
    outcome = models.CharField(max_length=16, choices=DecisionOutcome.Kind.choices)
    n = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "actor", "month", "reason_code", "outcome"], name="calibration_unique"
            ),
        ]
        indexes = [models.Index(fields=["actor", "month"], name="calibration_actor_month")]

    def __str__(self) -> str:
        code = self.reason_code or "-"
        return f"{self.actor} {self.month:%Y-%m} {self.host} {code} {self.outcome}: {self.n}"


class DecisionWeek(models.Model):
    """How many decisions one host has in one ISO week (``week``: its Monday, UTC) with one reason code
    (``reason_code`` ``""`` for none): the log chart's rollup (issue 10, Build 3).

    Kept by ``decisions_append_many`` in the transaction that appends the decisions (the only writer of
    the log), so the chart of the unfiltered or host-filtered log reads at most 26 weeks x 9 codes rows a
    host, not the decisions themselves. ``review.services.decision_weeks`` rebuilds and checks it.
    """

    host = models.CharField(max_length=64)
    week = models.DateField()
    reason_code = models.CharField(max_length=32, blank=True, default="")
    n = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "week", "reason_code"], name="decisionweek_unique"),
        ]
        # "which hosts have a week in the window / before it": probes by week across hosts
        indexes = [models.Index(fields=["week", "host"], name="decisionweek_week_host")]

    def __str__(self) -> str:
        return f"{self.host} week of {self.week}: {self.n} x {self.reason_code or NO_REASON_CODE}"


class ChainHead(models.Model):
    """The single row every decision-writing transaction locks, so ``seq`` and ``prev_hash`` never race.

    ``at`` is the last record's ``at`` as the record writes it (``""`` before the first decision) and
    ``mac`` the head's seal: HMAC-SHA256 of seq, hash and at with a key kept outside the database
    (``review.services.chain_head.head_seal``; docs/decisions-verify.md, "The head's seal").
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True, default="")
    at = models.CharField(max_length=32, blank=True, default="")
    mac = models.CharField(max_length=64, blank=True, default="")


class DecisionAck(models.Model):
    """A host's acknowledgement of one decision: applied, or failed with a detail. docs/decisions.md."""

    class Status(models.TextChoices):
        APPLIED = "applied"
        FAILED = "failed"

    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="ack")
    status = models.CharField(max_length=16, choices=Status.choices)
    detail = models.TextField(blank=True, default="")
    acked_at = models.DateTimeField()
    token_name = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["applied", "failed"]), name="ack_status_valid")
        ]
        # The log's host-status filter (applied / failed) reads acks by status.
        indexes = [models.Index(fields=["status", "decision"], name="ack_status_decision")]


class ApiToken(models.Model):
    """A bearer token for the JSON API, stored as its SHA-256; scoped to one host (or all) and to scopes."""

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    token_hash = models.CharField(max_length=64, unique=True)
    host = models.ForeignKey(
        "lessons.Host", on_delete=models.CASCADE, null=True, blank=True, related_name="tokens"
    )
    can_ingest = models.BooleanField(default=False)
    can_read = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Revocation is final: set once (review.services.tokens.token_revoke), never cleared; a new token is
    # the way back. When and by whom it was revoked are kept with it (None for a revocation made before
    # they were recorded, December 2026).
    revoked = models.BooleanField(default=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        scope = self.host.name if self.host_id else "all hosts"
        return f"{self.name} ({self.prefix}…, {scope})"


class PileClaim(models.Model):
    """A reviewer's claim on one entity's pile: "I am on it" until ``expires_at`` (UTC).

    One row per entity at most. A claim whose ``expires_at`` has passed is treated as absent everywhere
    (no job deletes it; the next claim replaces it). A claim never stops anyone from deciding: the pile
    version check stays the guarantee (docs/decisions.md, "The actions"). Issue 12, Build 3.
    """

    host = models.ForeignKey("lessons.Host", on_delete=models.CASCADE, related_name="claims")
    namespace = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=200)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pile_claims")
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        permissions = [("claim_pile", "Can claim a pile for a while")]
        constraints = [
            models.UniqueConstraint(fields=["host", "namespace", "subject"], name="pileclaim_one_per_entity")
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.host_id}:{self.namespace}/{self.subject} until {self.expires_at}"


class ImportJob(models.Model):
    """An ingest run in the background (issue 13, Build 2): an API body or an uploaded zip, stored here so
    that a worker that dies mid-job leaves a job another worker can run again from the start.

    ``kind``: ``api`` (``payload`` is interchange JSON Lines), ``altimate`` (``payload`` is the zip) or
    ``recount`` (a status change's recurrence refresh, review/services/recount.py: ``payload`` is JSON of
    the lesson keys per host; progress counts hosts).
    ``options``: the ingest's arguments (``default_host``, ``only_host``, ``skip_invalid``, ``dry_run``).
    Progress: ``phase`` (``validate``, ``lessons``, ``references``), ``lines_done`` of ``lines_total``
    in that pass; ``heartbeat_at`` is when the running attempt last reported. ``report``: the import
    report (``ImportReport.as_dict()``, plus the importer's lines for a zip) once finished; ``error``: one
    line when the job failed. ``attempt`` counts runs; only the current attempt may finish the job.
    Times are UTC. The payload is dropped as the job ends (``review.services.jobs.keeps_payload``: an
    upload's successful dry run keeps its zip for ``IMPORT_DRY_RUN_KEEP_SECONDS``, so that the same zip
    can be imported for real without choosing it again); the row is deleted ``JOBS_KEEP_DAYS`` after.
    """

    class Kind(models.TextChoices):
        API = "api", "API ingest"
        ALTIMATE = "altimate", "altimate-code upload"
        RECOUNT = "recount", "recurrence recount"

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "finished"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    host = models.CharField(max_length=64, blank=True, help_text="the host the job imports into, if one")
    options = models.JSONField(default=dict)
    payload = models.BinaryField(null=True, editable=False)
    payload_bytes = models.PositiveBigIntegerField(default=0)
    filename = models.CharField(max_length=255, blank=True)
    phase = models.CharField(max_length=16, blank=True)
    lines_total = models.PositiveBigIntegerField(default=0)
    lines_done = models.PositiveBigIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempt = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token_name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["state", "heartbeat_at"], name="review_importjob_state_hb")]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.kind}, {self.state})"

    @property
    def finished(self) -> bool:
        return self.state in (self.State.SUCCEEDED, self.State.FAILED)


class ApplyLock(models.Model):
    """The one ``apply_decisions`` run that may write a host's decisions into its engine now (issue 21,
    item 3): a row per host while a run holds it, deleted when the run ends. ``holder`` is the run's random
    token; ``pid`` and ``machine`` say which process holds it, so a run on the same machine whose process
    is gone is taken over at once; ``renewed_at`` (UTC) is moved on after each decision, and a lock not
    renewed for ``review.apply.host_lock.STALE_AFTER`` is taken over from any machine.
    """

    host = models.CharField(max_length=64, unique=True)
    holder = models.CharField(max_length=32)
    engine = models.CharField(max_length=16)
    pid = models.PositiveIntegerField()
    machine = models.CharField(max_length=255)
    acquired_at = models.DateTimeField()
    renewed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"apply lock of {self.host}: pid {self.pid} on {self.machine} ({self.engine})"
