"""Services that write reviewer decisions and their hash-chained log. docs/decisions.md.

``chain``: the record, its hash, appending and verifying. ``decisions``: every action (retire, restore,
consolidations, budgets) and the refusals they raise; ``exports``: streaming JSONL/CSV exports.
"""
