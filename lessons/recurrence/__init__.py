"""Recurrence in the database: the refresh that stores attributions and counts, lesson versions, and the
reads of counts, topics and coverage. The attribution rules are pure, in ``lessons.core.recurrence``.
docs/piles-and-recurrence.md, "Recurrence".
"""
