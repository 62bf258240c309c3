"""OpenMP probe."""


def is_available() -> bool:
    return False
