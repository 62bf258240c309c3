"""Reusable sample generators for the op table."""

from __future__ import annotations

import zlib

import numpy as np

from .harness import E, S, T, make_array

SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)),
                   ((5,), ()), ((0, 3), (3,)), ((1,), (4, 1))]


def unary(dtype, rng, low=-5, high=5):
    """0-d, empty, 1-3-d, non-contiguous and expanded inputs."""
    for shape in SHAPES:
        yield S(make_array(rng, shape, dtype, low, high))
    yield S(T(make_array(rng, (3, 4), dtype, low, high)))
    yield S(E(make_array(rng, (1, 4), dtype, low, high), (3, 4)))


def binary(dtype, rng, low=-5, high=5, low2=None, high2=None):
    """Broadcasting pairs, non-contiguous operands and Python scalars."""
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2
    for sa, sb in BROADCAST_PAIRS:
        yield S(make_array(rng, sa, dtype, low, high), make_array(rng, sb, dtype, low2, high2))
    yield S(T(make_array(rng, (4, 3), dtype, low, high)), make_array(rng, (3, 4), dtype, low2,
                                                                     high2).T.copy())
    yield S(make_array(rng, (3, 4), dtype, low, high), E(make_array(rng, (4,), dtype, low2,
                                                                    high2), (3, 4)))
    yield S(make_array(rng, (3,), dtype, low, high), 2)
    yield S(make_array(rng, (3,), dtype, low, high), 2.5)
    yield S(make_array(rng, (3, 4), dtype, low, high), make_array(rng, (2, 4), dtype, low2,
                                                                  high2))  # mismatch


def mixed_dtype_pairs(rng):
    """Operands of different dtypes, to check promotion."""
    for da, db in [("int64", "float32"), ("int32", "float64"), ("uint8", "int8"),
                   ("bool", "int16"), ("float16", "bfloat16"), ("float32", "complex64"),
                   ("float64", "float32"), ("int64", "bool")]:
        yield S(make_array(rng, (3,), da), make_array(rng, (3,), db))
        yield S(make_array(rng, (3,), da), make_array(rng, (), db))
        yield S(make_array(rng, (), da), make_array(rng, (2,), db))


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))
