"""Ingesting interchange records: reading sources, the passes, the row writer, the report.

docs/interchange.md.
"""
