"""Small parity fixes: int parameters refuse floats and bools as torch's parser does,
torch.linalg.LinAlgError is torch._C._LinAlgError, and views of empty tensors carry
torch's strides."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _outcome(lib, f):
    try:
        r = f(lib)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return "ok", tuple(r.shape)


INT_CALLS = {
    "tril_indices(3.0, 3)": lambda L: L.tril_indices(3.0, 3),
    "triu_indices(3, 3.0)": lambda L: L.triu_indices(3, 3.0),
    "tril_indices(3, 3, 1.0)": lambda L: L.tril_indices(3, 3, 1.0),
    "tril_indices(True, 3)": lambda L: L.tril_indices(True, 3),
    "tril_indices(tensor(3.), 3)": lambda L: L.tril_indices(L.tensor(3.0), 3),
    "tril_indices(tensor([3]), 3)": lambda L: L.tril_indices(L.tensor([3]), 3),
    "tril_indices(tensor(3), 3)": lambda L: L.tril_indices(L.tensor(3), 3),
    "tril_indices(int64(3), 2, -1)": lambda L: L.tril_indices(np.int64(3), 2, -1),
    "tril(x, 1.0)": lambda L: L.tril(L.ones(3, 3), 1.0),
    "triu(x, True)": lambda L: L.triu(L.ones(3, 3), True),
    "hann_window(4.0)": lambda L: L.hann_window(4.0),
    "bartlett_window(3.0)": lambda L: L.bartlett_window(3.0),
    "kaiser_window(3.0)": lambda L: L.kaiser_window(3.0),
    "kthvalue(x, 1.0)": lambda L: L.kthvalue(L.ones(3), 1.0)[0],
    "one_hot(i, 3.0)": lambda L: L.nn.functional.one_hot(L.tensor([1]), 3.0),
}


@pytest.mark.parametrize("call", list(INT_CALLS))
def test_int_parameters_as_torch(call):
    f = INT_CALLS[call]
    assert _outcome(gt, f) == _outcome(torch, f)


def test_bool_is_not_a_size():
    with pytest.raises(TypeError):
        torch.rand(True)
    with pytest.raises(TypeError):
        gt.rand(True)


def test_linalg_error_is_torchs_c_class():
    E, T = gt.linalg.LinAlgError, torch.linalg.LinAlgError
    assert E is gt._C._LinAlgError
    assert (E.__name__, E.__qualname__) == (T.__name__, T.__qualname__)
    assert E.__module__ == T.__module__.replace("torch", "glasstorch")
    assert issubclass(E, RuntimeError)
    with pytest.raises(E) as info:
        gt.linalg.inv(gt.zeros(2, 2))
    assert repr(info.value).startswith("_LinAlgError(")
    assert type(pickle.loads(pickle.dumps(info.value))) is E


VIEWS = {
    "empty(0)[None]": lambda L: L.empty(0)[None],
    "empty(0, 3)[:, None]": lambda L: L.empty(0, 3)[:, None],
    "empty(0, 3)[None, 0:0]": lambda L: L.empty(0, 3)[None, 0:0],
    "empty(2, 0, 3)[None, 1:, None]": lambda L: L.empty(2, 0, 3)[None, 1:, None],
    "empty(3, 0)[None, 1]": lambda L: L.empty(3, 0)[None, 1],
    "empty(0, 3)[:, 1]": lambda L: L.empty(0, 3)[:, 1],
    "empty(0, 4)[:, ::2]": lambda L: L.empty(0, 4)[:, ::2],
    "empty(3, 0, 2)[-1, None]": lambda L: L.empty(3, 0, 2)[-1, None],
    "empty(2, 3)[None, :, None]": lambda L: L.empty(2, 3)[None, :, None],
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_views_of_empty_tensors_have_torchs_strides(view):
    f = VIEWS[view]
    g, t = f(gt), f(torch)
    assert (tuple(g.shape), g.stride()) == (tuple(t.shape), t.stride())
