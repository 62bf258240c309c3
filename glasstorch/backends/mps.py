"""Apple MPS probes: not available in glasstorch."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
