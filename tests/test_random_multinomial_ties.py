"""multinomial without replacement where keys tie (float16/bfloat16 keys, repeated weights):
torch's topk leaves equal keys in the order of the C++ library's partial_sort (k * 64 <= n)
or nth_element + sort; the samples must be torch's, index for index."""

from __future__ import annotations

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

CASES = [  # (categories, samples, dtype)
    (40, 7, "float16"), (255, 35, "float16"), (143, 120, "bfloat16"), (700, 10, "float16"),
    (2000, 31, "bfloat16"), (17, 16, "float32"), (300, 4, "bfloat16"), (5000, 3000, "float16"),
]


@pytest.mark.parametrize("n, k, dtype", CASES)
def test_tied_keys_sample_as_torch(n, k, dtype):
    p = np.random.default_rng(n).integers(1, 3, size=(2, n)).astype(np.float32)
    got, want = [], []
    for lib, into in ((gt, got), (torch, want)):
        lib.manual_seed(k)
        into.append(lib.multinomial(lib.tensor(p).to(getattr(lib, dtype)), k).numpy())
        into.append(lib.multinomial(lib.tensor(p[0]).to(getattr(lib, dtype)), k).numpy())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
