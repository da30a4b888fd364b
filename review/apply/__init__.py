"""Applying reviewers' decisions back to a host's engine, run by a host operator (``apply_decisions``):
``areev`` through its Python binding, ``altimate`` by editing a learn store as altimate writes it.
"""
