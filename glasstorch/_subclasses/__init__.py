"""Tensor subclasses torch's tracing machinery uses (torch._subclasses)."""
