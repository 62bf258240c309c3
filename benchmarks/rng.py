"""Random draws: 10M float32 normals and uniforms (factories and in-place fills) and 1M
float64 normals, glasstorch next to torch from the same seed (the values are the same).

    python -m benchmarks --workloads rng
"""

from __future__ import annotations

_N = 10_000_000


def _draw(call, n):
    def make(lib):
        lib.manual_seed(0)
        buf = lib.empty(n)
        return lambda: call(lib, buf)
    return make


def cases():
    """(name, make(lib) -> zero-arg callable, calls per timing round)."""
    return [
        ("randn, 10M float32", _draw(lambda L, b: L.randn(_N), _N), 1),
        ("rand, 10M float32", _draw(lambda L, b: L.rand(_N), _N), 1),
        ("normal_, 10M float32", _draw(lambda L, b: b.normal_(), _N), 1),
        ("uniform_, 10M float32", _draw(lambda L, b: b.uniform_(), _N), 1),
        ("randn, 1M float64", _draw(lambda L, b: L.randn(1_000_000, dtype=L.float64), 0), 1),
    ]
