"""Fake tensors (torch._subclasses.fake_tensor): torch's compiler traces with tensors that
have metadata and no data. glasstorch's compiler traces without them (with real or meta
tensors), so none is ever made; libraries ask ``is_fake`` before reading a tensor's data."""

__all__ = ["is_fake"]


def is_fake(x):
    """Whether ``x`` is a fake tensor: never in glasstorch, which makes none (a meta tensor
    is not fake, as in torch)."""
    return False
