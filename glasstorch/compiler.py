"""glasstorch.compiler: glasstorch runs eagerly, so nothing is ever being compiled."""


def is_compiling() -> bool:
    """False: glasstorch never compiles."""
    return False


def is_dynamo_compiling() -> bool:
    """False: glasstorch never compiles."""
    return False


def disable(fn=None, recursive=True):
    """Accepted as a decorator; eager code is already "not compiled"."""
    if fn is None:
        return lambda f: f
    return fn


def reset() -> None:
    """Nothing to reset: there is no compilation cache."""
    pass


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """``torch.compile``: glasstorch has no compiler yet, so the model or function is
    returned as it is and runs eagerly with identical results. Usable as a decorator."""
    if model is None:
        return lambda m: m
    return model
