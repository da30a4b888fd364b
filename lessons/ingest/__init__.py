"""Ingesting interchange records: reading sources, the passes, the row writer, the report.

spec: interchange.md.
"""
