"""Ecosystem harness: popular torch-based libraries run unmodified on glasstorch.

- ``programs/<lib>.py``: one short program per library, split into cases; the same code runs
  under real torch (``record.py`` writes ``fixtures/<lib>/``) and under glasstorch
  (``test_<lib>.py`` compares with the recorded outputs).
- ``suites.py``: the libraries' own test suites, under torch and under glasstorch, side by side.
"""
