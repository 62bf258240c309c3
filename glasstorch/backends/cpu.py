"""CPU backend probes."""


def get_cpu_capability() -> str:
    return "NumPy"
