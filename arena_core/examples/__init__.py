"""Bundled example data: a small, realistic arena (see README.md)."""
