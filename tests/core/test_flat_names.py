"""Flat names libraries reach for: constants, isin, trapezoid/trapz/cumulative_trapezoid,
detach/detach_, UntypedStorage.from_file and its size, against torch."""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    if hasattr(r, "dtype") and hasattr(r, "tolist"):
        return str(r.dtype), tuple(r.shape), r.tolist()
    return r


def test_constants():
    for name in ("pi", "e", "inf"):
        assert getattr(gt, name) == getattr(torch, name) and type(getattr(gt, name)) is float
    assert math.isnan(gt.nan) and gt.newaxis is None is torch.newaxis
    x = gt.arange(3.0)
    assert x[:, gt.newaxis].shape == (3, 1)


def test_isin_forms():
    cases = [
        lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([2, 3, 7])),
        lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([2, 3]), invert=True),
        lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2),
        lambda lib: lib.isin(3, lib.tensor([1, 3])),
        lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([2.5, 2.0])),
        lambda lib: lib.isin(lib.tensor([1.0, float("nan")]), lib.tensor([float("nan"), 1.0])),
        lambda lib: lib.isin(elements=lib.tensor([1, 5]), test_elements=lib.tensor([5])),
        lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([1]), assume_unique=True),
        lambda lib: lib.isin(lib.tensor([True]), lib.tensor([1])),
        lambda lib: lib.isin(lib.tensor([1]), True),
        lambda lib: lib.isin(lib.tensor([1j]), lib.tensor([1j])),
        lambda lib: lib.isin(3, 4),
        lambda lib: lib.isin(lib.tensor([1]), [1]),
        lambda lib: lib.isin(lib.tensor([1, 2], dtype=lib.uint16),
                             lib.tensor([1], dtype=lib.uint16)),
        lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([1], dtype=lib.uint16)),
        lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([1]), out=lib.empty(2)),
        lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([1]), out=lib.empty(2, dtype=lib.bool)),
    ]
    for case in cases:
        assert _outcome(lambda: case(gt)) == _outcome(lambda: case(torch))
    with pytest.raises(NotImplementedError, match="isin_default_cpu.*UInt16"):
        gt.isin(gt.ones(2, dtype=gt.uint16), gt.ones(1, dtype=gt.uint16))


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_family(name):
    rng = np.random.default_rng(0)
    y, x = rng.normal(size=(3, 5)), np.sort(rng.uniform(0, 4, size=5))
    cases = [
        lambda lib: getattr(lib, name)(lib.tensor(y)),
        lambda lib: getattr(lib, name)(lib.tensor(y), lib.tensor(x)),
        lambda lib: getattr(lib, name)(lib.tensor(y), dx=0.25, dim=0),
        lambda lib: getattr(lib, name)(lib.tensor([[1, 2, 4], [3, 5, 9]])),
        lambda lib: getattr(lib, name)(lib.zeros(2, 0)),
        lambda lib: getattr(lib, name)(lib.tensor(y), lib.tensor(x[:3])),
        lambda lib: getattr(lib, name)(lib.tensor(3.0)),
        lambda lib: getattr(lib, name)(lib.tensor([True, False])),
        lambda lib: getattr(lib, name)(lib.tensor(y), lib.tensor(x), dx=1.0),
        lambda lib: getattr(lib, name)(lib.tensor(y), [0, 1, 2, 3, 4]),
    ]
    for case in cases:
        ours, theirs = _outcome(lambda: case(gt)), _outcome(lambda: case(torch))
        if isinstance(theirs, tuple):
            assert ours[:2] == theirs[:2]
            np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-12)
        else:
            assert ours == theirs
    # autograd: gradient and node name as torch's (built from differentiable ops)
    grads = []
    for lib in (gt, torch):
        yt = lib.tensor(y, requires_grad=True)
        xt = lib.tensor(x, requires_grad=True)
        out = getattr(lib, name)(yt, xt)
        grads.append((type(out.grad_fn).__name__,
                      [g.numpy() for g in lib.autograd.grad(out.sum(), (yt, xt))]))
    assert grads[0][0] == grads[1][0]
    for a, b in zip(grads[0][1], grads[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_detach_functions():
    for lib in (gt, torch):
        x = lib.ones(2, requires_grad=True) * 2
        y = lib.detach(x)
        assert not y.requires_grad and y.data_ptr() == x.data_ptr()
        assert lib.detach_(x) is x and not x.requires_grad and x.grad_fn is None


# ----------------------------------------------------------------------------- storages

def _with_file(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_from_file_private_and_shared(tmp_path):
    for lib in (gt, torch):
        p = _with_file(tmp_path, f"{lib.__name__}.bin", bytes(range(16)))
        s = lib.UntypedStorage.from_file(p, False, 8)
        assert s.tolist() == list(range(8)) and s.nbytes() == 8 and s.is_shared()
        s[0] = 99  # MAP_PRIVATE: the file keeps its bytes
        assert open(p, "rb").read()[:1] == b"\x00" and s[0] == 99
        s = lib.UntypedStorage.from_file(p, shared=True, nbytes=16)
        s[0] = 99
        s[2:4] = 7
        assert open(p, "rb").read()[:5] == bytes([99, 1, 7, 7, 4])
        grown = lib.UntypedStorage.from_file(p, True, 32)  # shared: the file grows
        assert grown.nbytes() == 32 and os.path.getsize(p) == 32
        assert lib.UntypedStorage.from_file(p).nbytes() == 0
        new = str(tmp_path / f"{lib.__name__}.new")
        assert lib.UntypedStorage.from_file(new, True, 4).tolist() == [0, 0, 0, 0]
        assert os.path.getsize(new) == 4


def test_from_file_errors_match_torch(tmp_path):
    def run(lib, *args):
        p = _with_file(tmp_path, "e.bin", bytes(8))
        missing = str(tmp_path / "missing.bin")
        args = [{"P": p, "M": missing}.get(a, a) if isinstance(a, str) else a for a in args]
        try:
            lib.UntypedStorage.from_file(*args)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).replace(str(tmp_path), "")
        return "ok"

    for args in (("P", False, 64), ("M", False, 4), ("P", False, -1), (123, False, 4),
                 ("P", False, 2.0)):
        assert run(gt, *args) == run(torch, *args), args


def test_storage_item_access_matches_torch():
    def ops(lib):
        s = lib.UntypedStorage(4)
        s[0] = 300
        s[1] = -1
        s[2] = True
        s[3] = 0
        out = [s.tolist(), s[-1], s[1:3].tolist(), s[1:3].nbytes()]
        view = s[1:3]
        view[0] = 5  # a slice is a view of the same bytes
        out.append(s.tolist())
        for bad in (lambda: s.__setitem__(2, 1.5), lambda: s.__setitem__(9, 1),
                    lambda: s[9], lambda: s.__setitem__("a", 1)):
            try:
                bad()
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        return out

    assert ops(gt) == ops(torch)


def test_storage_sizeof_follows_torchs_formula():
    # torch: object.__sizeof__ plus the bytes held (its fixed object overhead differs)
    base_g = sys.getsizeof(gt.empty(0, dtype=gt.uint8).untyped_storage())
    base_t = sys.getsizeof(torch.empty(0, dtype=torch.uint8).untyped_storage())
    for n in (1, 10, 1000, 10 ** 5):
        for dtype in ("uint8", "float32", "float64"):
            g = gt.empty(n, dtype=getattr(gt, dtype)).untyped_storage()
            t = torch.empty(n, dtype=getattr(torch, dtype)).untyped_storage()
            assert sys.getsizeof(g) - base_g == sys.getsizeof(t) - base_t == g.nbytes()
            assert g.__sizeof__() == object.__sizeof__(g) + g.nbytes()
