"""Signals the lessons app sends for other apps to act on, so that lessons never imports them.

``host_evidence_changed``: an ingest (or sync, import) wrote exposures, corrections, verdicts or lessons
for these hosts; sent once per batch after its write phase, with ``hosts`` (their names, sorted). The review
app recomputes the outcomes of the hosts' decisions (docs/decisions.md, "Outcomes").

``recount_offered``: a status change's recurrence refresh touches more lesson keys than
``settings.RECURRENCE_BACKGROUND_KEYS``; sent with ``changes`` (a ``RecurrenceChanges``) before it is run
in the caller. A receiver that takes the work elsewhere (the review app queues a recount job while it
answers a web request) returns True; when none does, the refresh runs at once.
"""

from __future__ import annotations

from django.dispatch import Signal

host_evidence_changed = Signal()
recount_offered = Signal()
