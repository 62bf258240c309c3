"""cuDNN switches: settable like torch's so scripts run; they change nothing on the CPU."""

deterministic = False
benchmark = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None
