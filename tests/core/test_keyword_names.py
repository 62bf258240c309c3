"""torch's parameter names for sizes and shapes (``torch.empty(size=(3, 4))``, as a
graph-attention example builds its weights), checked on both libraries."""

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

CALLS = [
    "lib.empty(size=(3, 4))", "lib.zeros(size=(3, 4))", "lib.ones(size=[3])",
    "lib.ones(2).view(size=(2, 1))", "lib.ones(2).view(dtype=lib.int32)",
    "lib.ones(2).reshape(shape=(2, 1))", "lib.reshape(lib.ones(2), shape=(1, 2))",
    "lib.ones(2, 3).permute(dims=(1, 0))", "lib.permute(lib.ones(2, 3), dims=(1, 0))",
    "lib.ones(2).expand(size=(3, 2))", "lib.ones(2).new_zeros(size=(3,))",
    "lib.ones(2).new_ones(size=[1, 2])", "lib.ones(2).new_empty(size=(2,))",
    "lib.ones(4).split(split_size=2)", "lib.split(lib.ones(4), split_size_or_sections=2)",
    "lib.empty(2, size=(3,))", "lib.ones(2).view(2, size=(2,))",
    "lib.zeros(2, 3)", "lib.zeros((2, 3))", "lib.ones(2, 3).permute(1, 0)",
]


def _shape_or_error(code, lib):
    try:
        out = eval(code, {"lib": lib})
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return type(e).__name__
    return tuple((out[0] if isinstance(out, tuple) else out).shape)


@pytest.mark.parametrize("code", CALLS)
def test_keyword_forms_like_torch(code):
    assert _shape_or_error(code, gt) == _shape_or_error(code, torch)
