"""Data model of the domain. docs/interchange.md (fields), docs/piles-and-recurrence.md, "Piles" (entities),
docs/piles-and-recurrence.md, "Recurrence" (counts).

Every rule the specs state about a single row is also a database constraint, so that no code
path (admin, shell, a future bug) can store a budget of 0 or a lesson status of "maybe".
Timestamps are aware datetimes in UTC; the interchange's epoch milliseconds map to them exactly.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from lessons.core import recurrence as recurrence_rules
from lessons.core.interchange import DEFAULT_MAX_ACTIVE, MAX_ACTIVE_MAX, MAX_ACTIVE_MIN
from lessons.core.text import hash8


class Host(models.Model):
    """An agent host: its name and its budget (``max_active``, applied only while ``budget_enabled``)."""

    name = models.CharField(max_length=64, unique=True)
    max_active = models.PositiveIntegerField(default=DEFAULT_MAX_ACTIVE)
    budget_enabled = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(max_active__gte=MAX_ACTIVE_MIN) & Q(max_active__lte=MAX_ACTIVE_MAX),
                name="host_max_active_in_bounds",
            ),
            models.CheckConstraint(
                condition=Q(name__regex=r"^[a-z0-9][a-z0-9._-]{0,63}$"), name="host_name_format"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Lesson(models.Model):
    """One version of a lesson: identity ``(host, hash)``. docs/interchange.md, "lesson"."""

    class Status(models.TextChoices):
        LIVE = "live"
        RETRACTED = "retracted"
        SUPERSEDED = "superseded"

    class Kind(models.TextChoices):
        LESSON = "lesson"
        CONSOLIDATION = "consolidation"

    class Origin(models.TextChoices):
        BUILTIN = "builtin"
        LLM = "llm"
        HUMAN = "human"
        COMMAND = "command"

    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="lessons")
    hash = models.CharField(max_length=64)
    namespace = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=200)
    text = models.TextField()
    text_hash = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LIVE)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.LESSON)
    lesson_id = models.CharField(max_length=200, null=True, blank=True)
    store = models.CharField(max_length=200, null=True, blank=True)
    origin = models.CharField(max_length=16, choices=Origin.choices, null=True, blank=True)
    superseded_by = models.CharField(max_length=64, null=True, blank=True)
    consolidates = models.JSONField(default=list, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    helpful = models.PositiveIntegerField(null=True, blank=True)
    harmful = models.PositiveIntegerField(null=True, blank=True)
    applied = models.PositiveIntegerField(null=True, blank=True)
    tags = models.JSONField(default=list, blank=True)
    # Denormalized from Verdict (docs/interchange.md, "verdict: an outcome of the Verify gate") so the pile
    # pages can count the
    # verdict mix in SQL; kept current by lessons.services.verdicts in the same transaction.
    latest_verdict = models.CharField(max_length=64, null=True, blank=True)
    source_note = models.TextField(blank=True, default="")  # e.g. an altimate retirement reason
    # Set when a reviewer's decision last changed the status: an import older than this
    # never silently undoes it (docs/interchange.md, "lesson").
    decided_at = models.DateTimeField(null=True, blank=True)
    ingested_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "hash"], name="lesson_unique_host_hash"),
            models.CheckConstraint(
                condition=Q(status__in=["live", "retracted", "superseded"]), name="lesson_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["lesson", "consolidation"]), name="lesson_kind_valid"
            ),
            models.CheckConstraint(condition=Q(hash__regex=r"^[0-9a-f]{64}$"), name="lesson_hash_hex64"),
        ]
        indexes = [
            models.Index(fields=["host", "namespace", "subject", "status"], name="lesson_entity_status"),
            models.Index(fields=["host", "store", "lesson_id"], name="lesson_store_id"),
            models.Index(fields=["status", "host"], name="lesson_status_host"),
        ]

    def __str__(self) -> str:
        return f"{hash8(self.hash)}… {self.text[:60]}"

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


class Verdict(models.Model):
    """An outcome of the Verify gate for one lesson. docs/interchange.md, "verdict: an outcome of the Verify
    gate".

    ``key`` digests the identity ``(metric, horizon_ms, measured_at)`` because NULLs are distinct
    in unique constraints on both databases; a repeat of the same verdict is then a no-op.
    """

    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="verdicts")
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="verdicts")
    key = models.CharField(max_length=64)
    verdict = models.CharField(max_length=64)
    metric = models.CharField(max_length=200, null=True, blank=True)
    baseline = models.FloatField(null=True, blank=True)
    current = models.FloatField(null=True, blank=True)
    horizon_ms = models.BigIntegerField(null=True, blank=True)
    measured_at = models.DateTimeField()
    ingested_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["lesson", "key"], name="verdict_unique_identity")]
        indexes = [
            models.Index(fields=["lesson", "-measured_at", "-horizon_ms", "-id"], name="verdict_latest")
        ]


class Exposure(models.Model):
    """A lesson shown to a session. ``lesson_key`` is docs/piles-and-recurrence.md, "Recurrence"'s key;
    ``text_hash`` the text shown."""

    # No index of its own: every index below starts with host (one index fewer to keep up per row: issue 10).
    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="exposures", db_index=False)
    session = models.CharField(max_length=200)
    lesson_key = models.CharField(max_length=420)
    # No index either: no query reads exposures by lesson (migration 0009).
    lesson = models.ForeignKey(
        Lesson, on_delete=models.SET_NULL, null=True, blank=True, related_name="exposures", db_index=False
    )
    text_hash = models.CharField(max_length=64, null=True, blank=True)
    shown_at = models.DateTimeField()
    tier = models.CharField(max_length=200, null=True, blank=True)
    key = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["host", "key"], name="exposure_unique_identity")]
        indexes = [
            models.Index(fields=["host", "session"], name="exposure_session"),
            # With the session: a lesson page groups its key's exposures by session, and SQLite (no ANALYZE)
            # took (host, session) for that order, reading every exposure of the host (7.7 s at 1M lines).
            models.Index(fields=["host", "lesson_key", "session"], name="exposure_lesson_key"),
        ]


class SessionEnd(models.Model):
    """When one session of a host was last active: the greatest ``shown_at`` or ``corrected_at`` of its
    exposures and corrections, as epoch ms (UTC). Derived, and kept only for the hosts ``SessionEndsKept``
    names (those whose decision outcomes are kept: a retire's outcome counts the host's sessions active
    after it; docs/decisions.md, "Outcomes"), by each recurrence refresh of changed sessions, in the
    writing transaction (``lessons.recurrence.session_ends``)."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="+", db_index=False)
    session = models.CharField(max_length=200)
    last_ms = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["host", "session"], name="session_end_unique")]
        indexes = [models.Index(fields=["host", "last_ms"], name="session_end_last")]


class SessionEndsKept(models.Model):
    """A host whose ``SessionEnd`` rows are kept: every session of it is there, each with its last
    activity, from the transaction that made this row on."""

    host = models.OneToOneField(Host, on_delete=models.CASCADE, primary_key=True, related_name="+")


class ShownText(models.Model):
    """A text a session was shown that is no stored version of its lesson key (an earlier edit the host
    never sent as a lesson, e.g. an altimate session snapshot). ``lesson_key`` is
    docs/piles-and-recurrence.md, "Recurrence"'s key.

    Recurrence matches a correction against it like any version the session was shown: a match counts
    as ``earlier_version`` (it is never the current text). docs/piles-and-recurrence.md, "Attributing one
    correction", step 2; docs/interchange.md, "exposure: a session was shown a lesson" (``text``).
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="shown_texts")
    lesson_key = models.CharField(max_length=420)
    text_hash = models.CharField(max_length=64)
    text = models.TextField()
    first_seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "lesson_key", "text_hash"], name="shown_text_unique")
        ]


class Correction(models.Model):
    """A user (or tool, review, CI) correction in a session. docs/interchange.md, "correction: a user
    corrected the agent"."""

    # No index of its own: both indexes below start with host.
    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="corrections", db_index=False)
    session = models.CharField(max_length=200)
    ext_id = models.CharField(max_length=200, null=True, blank=True)
    key = models.CharField(max_length=64)
    kind = models.CharField(max_length=64)
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    corrected_at = models.DateTimeField()
    turn_started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["host", "key"], name="correction_unique_identity")]
        indexes = [
            models.Index(fields=["host", "session"], name="correction_session"),
            # A lesson page's corrections on its topic are looked for among the host's newest user
            # corrections (lessons.recurrence.lesson.TOPIC_WINDOW): read from the end of this index.
            models.Index(fields=["host", "kind", "corrected_at", "id"], name="correction_newest"),
        ]


GATE_NOT_RUN = "not_run"  # a reviewer-written draft's GROUND and VERIFY: no model gate judged it


class Draft(models.Model):
    """A drafted consolidating lesson for one entity. docs/interchange.md, "draft: a drafted consolidating
    lesson"; docs/decisions.md.

    ``status`` is what reviewers decided; "stale" is derived (a superseded member is no longer live).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    class Source(models.TextChoices):
        HOST = "host"  # sent by a host (a model's draft, or a person's at the host)
        REVIEWER = "reviewer"  # written by a reviewer in the dashboard (issue 22, Build 4)

    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="drafts")
    ext_id = models.CharField(max_length=200)
    namespace = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=200)
    text = models.TextField()
    supersedes = models.JSONField(default=list)
    drafted_by = models.CharField(max_length=200)
    triggered_by = models.CharField(max_length=200, null=True, blank=True)
    # The users the labels named when the draft arrived (lessons.services.principals): a user renamed
    # later still may not approve it. Null for a model author or a name no user had.
    drafted_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    triggered_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # "pass" or "fail" as the host's gates said; "not_run" for a reviewer-written draft (no model gate runs).
    gate_ground = models.CharField(max_length=8)
    gate_verify = models.CharField(max_length=8)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.HOST)
    # A reviewer-written draft's waived anchors, {anchor as shown: the writer's reason}, e.g. "`at`" or
    # '"Client"': every anchor of a member the text drops (lessons.core.written). Empty for a host's draft.
    waivers = models.JSONField(default=dict, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_lesson = models.ForeignKey(
        Lesson, on_delete=models.SET_NULL, null=True, blank=True, related_name="approved_drafts"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    ingested_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "ext_id"], name="draft_unique_identity"),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "approved", "rejected"]), name="draft_status_valid"
            ),
            models.CheckConstraint(
                condition=(
                    Q(source="host")
                    & Q(gate_ground__in=["pass", "fail"])
                    & Q(gate_verify__in=["pass", "fail"])
                )
                | (Q(source="reviewer") & Q(gate_ground=GATE_NOT_RUN) & Q(gate_verify=GATE_NOT_RUN)),
                name="draft_gates_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["host", "namespace", "subject", "status"], name="draft_entity_status")
        ]

    @property
    def written_by_reviewer(self) -> bool:
        return self.source == self.Source.REVIEWER

    @property
    def gates_pass(self) -> bool:
        """Whether no gate stands in the way of an approval: both passed, or (a reviewer-written draft)
        none was run."""
        if self.written_by_reviewer:
            return True
        return self.gate_ground == "pass" and self.gate_verify == "pass"


class RecurrenceCount(models.Model):
    """Stored recurrence counts of one lesson version (its current text). docs/piles-and-recurrence.md,
    "Recurrence"."""

    lesson = models.OneToOneField(
        Lesson, on_delete=models.CASCADE, primary_key=True, related_name="recurrence"
    )
    sessions_shown = models.PositiveIntegerField(default=0)
    recurred = models.PositiveIntegerField(default=0)
    recurred_sessions = models.PositiveIntegerField(default=0)
    during = models.PositiveIntegerField(default=0)
    unknown = models.PositiveIntegerField(default=0)
    ambiguous = models.PositiveIntegerField(default=0)
    earlier_version = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["recurred_sessions"], name="recurrence_recurring")]


class CorrectionAttribution(models.Model):
    """What one ``user_correction`` was attributed to: one row per charged lesson version.

    Derived data, rebuilt by ``lessons.recurrence.refresh``: a correction charged to one lesson has
    one row (``recurred``, ``during``, ``unknown`` or ``earlier_version``); an ambiguous one has a row
    per matching candidate; an unmatched one has a single row without a lesson. ``lesson`` is always
    the current version of the charged key. ``session`` repeats the correction's session so that a
    session's rows are replaced, and distinct sessions counted, without a join.
    docs/piles-and-recurrence.md, "Attributing one correction".
    """

    # The names' one home is lessons/core/recurrence.py (the attribution rules).
    Outcome = models.TextChoices(
        "Outcome", [(name.upper(), name) for name in recurrence_rules.STORED_OUTCOMES]
    )

    # No single-column indexes: host leads attribution_session, correction the unique constraint, lesson
    # attribution_lesson (each would only be one more index to keep up per row).
    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="attributions", db_index=False)
    session = models.CharField(max_length=200)
    correction = models.ForeignKey(
        Correction, on_delete=models.CASCADE, related_name="attributions", db_index=False
    )
    lesson = models.ForeignKey(
        Lesson, on_delete=models.CASCADE, null=True, blank=True, related_name="attributions", db_index=False
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["correction", "lesson"], name="attribution_unique_lesson"),
            models.CheckConstraint(
                condition=Q(outcome__in=list(recurrence_rules.STORED_OUTCOMES)),
                name="attribution_outcome_valid",
            ),
            models.CheckConstraint(
                condition=(Q(outcome=recurrence_rules.UNMATCHED) & Q(lesson__isnull=True))
                | (~Q(outcome=recurrence_rules.UNMATCHED) & Q(lesson__isnull=False)),
                name="attribution_lesson_iff_matched",
            ),
        ]
        indexes = [
            models.Index(fields=["host", "session"], name="attribution_session"),
            models.Index(fields=["lesson", "outcome"], name="attribution_lesson"),
        ]


class AreevCursor(models.Model):
    """How far ``manage.py sync_areev`` has read one areev memory file's change feed for one host.

    ``op_seq`` is the last ``changes_since`` sequence number read (memory-wide, ascending); the next
    sync asks only for what came after it. ``memory_path`` is the file's absolute path. ``op_mark`` is
    that op as ``"<hlc>:<hash>"`` (lessons.importers.areev_engine.op_mark): the cursor holds only for the
    memory that has this op at ``op_seq``; a file replaced at the same path is read in full.
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="areev_cursors")
    memory_path = models.CharField(max_length=1000)
    op_seq = models.PositiveBigIntegerField(default=0)
    op_mark = models.CharField(max_length=100, blank=True)
    synced_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "memory_path"], name="areev_cursor_unique_memory"),
        ]


# The queue's sorts, each served by a partial index over the over-budget rows (a few percent of the
# entities). Every sort ends in the row's unique (host_name, namespace, subject), so one index serves a
# column in both directions. ``live`` is the queue's "count" column.
QUEUE_SORT_FIELDS = (
    "live",
    "overage",
    "held",
    "regressed",
    "drifted",
    "other",
    "not_applied",
    "recurring",
    "pending_drafts",
    "groups",
    "facts",
    "restatements",
    "oldest",
)
_OVER = Q(over_budget=True)
# The SQLite FTS5 (trigram) table over ``EntityCount.document``, made by migration 0005 with its triggers.
ENTITY_FTS_TABLE = "lessons_entitycount_fts"


class EntityCount(models.Model):
    """The counts of one entity (host, namespace, subject) that has or had a lesson, kept by the writers.

    Derived data: ``lessons.services.entity_counts`` refreshes the rows a write touches in the writer's
    transaction; ``manage.py piles --recount`` rebuilds them, ``--check`` compares. Only live lessons
    count: ``live``; the verdict mix ``held``, ``regressed``, ``drifted``, ``other``, ``not_applied``
    (no latest verdict); ``recurring`` (live members with ``recurred_sessions >= RECURRING_MIN_SESSIONS``);
    ``oldest`` (the oldest live member's ``created_at``, UTC; null without one). ``pending_drafts``
    counts the entity's pending drafts. ``over_budget`` when the host's budget is enabled and
    ``live > max_active``; ``overage = live - max_active`` then, else 0. ``total``: lessons of any status
    (the host page's "All lessons"). ``groups`` (the groups of the live members' facts, umbrellas
    included, ``lessons.core.facts``) and ``document`` (host name, namespace, subject and the live
    members' texts, one a line: what the queue's text filter searches) are filled only while over
    budget, else 0 and "". ``fact_groups`` holds the pile's facts (``lessons.core.facts.Fact.as_dict``
    each, in pile order) computed with method ``facts_version``; ``facts`` counts those that are not
    umbrellas and ``restatements`` is ``live - facts`` (both 0, ``fact_groups`` empty, while not over
    budget). ``host_name`` repeats the host's (immutable) name so that sorts by host and
    the ties of every sort are served by one index. docs/piles-and-recurrence.md, "Piles", rules 2-5.
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="entity_counts")
    host_name = models.CharField(max_length=64)
    namespace = models.CharField(max_length=200, blank=True)
    subject = models.CharField(max_length=200)
    live = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0)
    regressed = models.PositiveIntegerField(default=0)
    drifted = models.PositiveIntegerField(default=0)
    other = models.PositiveIntegerField(default=0)
    not_applied = models.PositiveIntegerField(default=0)
    recurring = models.PositiveIntegerField(default=0)
    pending_drafts = models.PositiveIntegerField(default=0)
    oldest = models.DateTimeField(null=True, blank=True)
    over_budget = models.BooleanField(default=False)
    overage = models.PositiveIntegerField(default=0)
    groups = models.PositiveIntegerField(default=0)
    document = models.TextField(blank=True, default="")
    total = models.PositiveIntegerField(default=0)
    facts = models.PositiveIntegerField(default=0)
    restatements = models.PositiveIntegerField(default=0)
    fact_groups = models.JSONField(default=list, blank=True)
    facts_version = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "namespace", "subject"], name="entitycount_unique_entity"
            ),
        ]
        indexes = [
            # The host page's entity table (review.hosts.selectors.host_entities): most live first, and
            # its "All lessons" sort; its entity sort is served by the unique constraint's index.
            models.Index(fields=["host", "-live", "namespace", "subject"], name="entitycount_host_live"),
            models.Index(fields=["host", "-total", "namespace", "subject"], name="entitycount_host_total"),
            models.Index(
                fields=["-overage", "-live", "host_name", "namespace", "subject"],
                condition=_OVER,
                name="entitycount_q_worst",
            ),
            models.Index(
                fields=["host_name", "namespace", "subject"], condition=_OVER, name="entitycount_q_host"
            ),
            models.Index(  # the host filter in the default order
                fields=["host_name", "-overage", "-live", "namespace", "subject"],
                condition=_OVER,
                name="entitycount_q_host_worst",
            ),
            models.Index(
                fields=["namespace", "subject", "host_name"], condition=_OVER, name="entitycount_q_target"
            ),
            models.Index(
                fields=["-overage", "-live", "host_name", "namespace", "subject"],
                condition=_OVER & Q(recurring__gt=0),
                name="entitycount_q_recurring_only",
            ),
            *(
                models.Index(
                    fields=[f, "host_name", "namespace", "subject"],
                    condition=_OVER,
                    name=f"entitycount_q_{f}",
                )
                for f in QUEUE_SORT_FIELDS
            ),
        ]

    def __str__(self) -> str:
        return f"{self.host_name} {self.namespace}/{self.subject}: {self.live} live"


class HostCount(models.Model):
    """Per-host totals of ``EntityCount`` for the hosts page: ``live_lessons``, ``entity_count`` (entities
    with a live lesson), ``pile_count`` (entities over budget).

    A row of its own rather than fields on ``Host``: the admin saves whole ``Host`` rows, and a save from
    a form read before a write would put old totals back. Kept by the same refresh as ``EntityCount``; its
    row is also the lock every counts writer of the host takes (``SELECT … FOR UPDATE``), so a budget
    change and a retire on the same host serialize. A host without a row has no counts yet (zeros).
    """

    host = models.OneToOneField(Host, on_delete=models.CASCADE, primary_key=True, related_name="counts")
    live_lessons = models.PositiveIntegerField(default=0)
    entity_count = models.PositiveIntegerField(default=0)
    pile_count = models.PositiveIntegerField(default=0)


class RestatementMark(models.Model):
    """A reviewer's correction of a host's fact grouping: lessons ``a`` and ``b`` (hashes, stored
    ordered ``a < b``) state one fact (``same``) or different facts. Wins over the automatic grouping and
    survives regrouping; changes no lesson and is not a decision. A newer mark of the same pair replaces
    the older one (unique on host, a, b). ``made_at`` is UTC. docs: docs/reviewing.md,
    docs/piles-and-recurrence.md.
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="restatement_marks")
    a = models.CharField(max_length=64)
    b = models.CharField(max_length=64)
    same = models.BooleanField()
    reason = models.CharField(max_length=500)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    made_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "a", "b"], name="restatementmark_unique_pair"),
            models.CheckConstraint(condition=Q(a__lt=F("b")), name="restatementmark_ordered"),
            models.CheckConstraint(condition=~Q(reason=""), name="restatementmark_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.host_id} {hash8(self.a)} {'=' if self.same else '≠'} {hash8(self.b)}"


class TextEmbedding(models.Model):
    """A lesson text's vector from the facts' sentence model, stored so that a process that regroups a
    pile reads it instead of encoding the text again (5-8 ms a text). ``key``: the SHA-256 of the exact
    text (``lessons.core.embedding.text_key``); ``model``: ``lessons.core.embedding.MODEL`` when it was
    computed (a vector of another model is computed again and replaced); ``vector``: ``DIMENSIONS``
    little-endian float32 values. Derived data: deleting rows loses nothing but time.
    docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
    """

    key = models.CharField(max_length=64, primary_key=True)
    model = models.CharField(max_length=64)
    vector = models.BinaryField()

    def __str__(self) -> str:
        return f"{hash8(self.key)} {self.model}"


class DataVersion(models.Model):
    """The one row (``id`` 1) that counts committed writes: ``value`` goes up after every transaction that
    wrote to the database (``lessons.services.data_version``), ``epoch`` is set when the row is made, so a
    version from before a wipe never matches one after. ``scoped`` goes up with ``value`` when every write
    of the transaction declared its hosts (``for_host``), so ``value - scoped`` counts the raises that may
    have changed any host's pages (the unscoped count: a writer that knows nothing of ``scoped`` raises it
    too). Conditional reads (``ETag``) and kept page parts are built from it.
    docs: docs/api.md ("Conditional reads"), docs/production.md ("Cache")."""

    epoch = models.CharField(max_length=32)
    value = models.BigIntegerField(default=0)
    scoped = models.BigIntegerField(default=0)


class HostVersion(models.Model):
    """One host's data version: ``value`` is ``DataVersion.value`` as it was right after the last raise
    whose writes were declared for this host (``lessons.services.data_version.for_host``), in ``epoch``
    (a row of another epoch than ``DataVersion``'s counts as absent). It only ever goes up within an
    epoch. ``name`` is the host's name, not a foreign key: a page names its host by name, and the row
    outlives a deleted host, so a host made again under the name never gets an old value back.
    docs: docs/production.md ("Cache")."""

    name = models.CharField(max_length=64, unique=True)
    epoch = models.CharField(max_length=32)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name} {self.epoch}.{self.value}"
