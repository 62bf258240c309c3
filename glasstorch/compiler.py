"""glasstorch.compiler: glasstorch runs eagerly, so nothing is ever being compiled."""


def is_compiling() -> bool:
    return False


def is_dynamo_compiling() -> bool:
    return False


def disable(fn=None, recursive=True):
    """Accepted as a decorator; eager code is already "not compiled"."""
    if fn is None:
        return lambda f: f
    return fn


def reset() -> None:
    pass
