"""Signals the lessons app sends for other apps to act on, so that lessons never imports them.

``host_evidence_changed``: an ingest (or sync, import) wrote exposures, corrections, verdicts or lessons
for these hosts; sent once per batch after its write phase, with ``hosts`` (their names, sorted). The review
app recomputes the outcomes of the hosts' decisions (docs/decisions.md, "Outcomes").
"""

from __future__ import annotations

from django.dispatch import Signal

host_evidence_changed = Signal()
