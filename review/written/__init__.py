"""A consolidation written by a reviewer (issue 22, Build 4): the editor, its live coverage matrix, submit."""
