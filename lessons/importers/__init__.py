"""Importers for real sources: an altimate-code learn store and areev JSON output. docs/importers.md.

Each importer is a pure translation from the source's own files to interchange record dicts
(``altimate.py``, ``areev.py``), and a small runner (``run.py``) that resolves what the translation
needs from the database and hands the records to the same ingest code as ``manage.py ingest``.
"""
