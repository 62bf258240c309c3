"""oneDNN switches, accepted for compatibility."""

enabled = False


def is_available() -> bool:
    return False
