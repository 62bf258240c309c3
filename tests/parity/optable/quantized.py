"""Fake quantization (quantize then dequantize, values stay float) with its straight-through
gradient. Finite differences cannot check a step function's STE gradient, so the gradients
are compared with torch's instead."""

import numpy as np

from ..harness import OpInfo, S, make_array

_FQ_DTYPES = ("float32", "float64", "int64")  # int64: torch's NotImplementedError


def _per_tensor(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), 0.1, 3, 0, 255)
    # values on the rounding ties and past the clamp
    ties = (np.arange(-40, 40) / 2.0 * 0.25).astype(dtype)
    yield S(ties, 0.25, -2, -8, 7)
    yield S(make_array(rng, (), dtype), 0.5, 0, -128, 127)
    yield S(make_array(rng, (0, 2), dtype), 0.5, 0, 0, 255)


def _per_channel(dtype, rng):
    x = make_array(rng, (3, 5), dtype)
    yield S(x, np.array([0.1, 0.2, 0.3], "float32"), np.array([0, 1, -1], "int32"), 0, -128,
            127)
    yield S(make_array(rng, (2, 4, 3), dtype), np.array([0.5, 0.25, 1.0, 0.125], "float32"),
            np.array([1, 0, 2, 3], "int32"), 1, 0, 15)
    yield S(x, np.array([0.1, 0.2, 0.3], "float32"), np.array([0, 1, 2], "int64"), 0, -128,
            127)  # int64 zero points: RuntimeError


OPS = [
    OpInfo("fake_quantize_per_tensor_affine",
           lambda lib, a, *args: lib.fake_quantize_per_tensor_affine(a, *args), _per_tensor,
           dtypes=_FQ_DTYPES, grad=True, gradcheck=False),
    OpInfo("fake_quantize_per_channel_affine",
           lambda lib, a, *args: lib.fake_quantize_per_channel_affine(a, *args), _per_channel,
           dtypes=_FQ_DTYPES, grad=True, gradcheck=False),
]
