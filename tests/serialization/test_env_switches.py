"""torch's environment switches for torch.load, run on both libraries."""

import io
import warnings

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _numpy_checkpoint(lib):
    buf = io.BytesIO()
    lib.save({"a": np.arange(3)}, buf)  # a NumPy array is not a weights_only global
    return buf.getvalue()


def _outcome(lib, data, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            obj = lib.load(io.BytesIO(data), **kw)
            result = obj["a"].tolist()
        except Exception as e:  # noqa: BLE001 - the type is what we compare
            result = type(e).__name__
    return result, [str(w.message)[:40] for w in caught if w.category is UserWarning]


@pytest.mark.parametrize("env,kw", [
    ({}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "true"}, {"weights_only": True}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"}, {"weights_only": False}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "yes", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "0"}, {}),
])
def test_switches_behave_like_torch(monkeypatch, env, kw):
    for name in ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_WEIGHTS_ONLY_LOAD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    theirs = _outcome(torch, _numpy_checkpoint(torch), **kw)
    ours = _outcome(gt, _numpy_checkpoint(gt), **kw)
    assert ours == theirs
