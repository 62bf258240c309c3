"""Runnable examples: ``python -m glasstorch.examples.<name>``."""
