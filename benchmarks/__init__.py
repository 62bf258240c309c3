"""Benchmarks: glasstorch and torch side by side in one run. ``python -m benchmarks``."""
