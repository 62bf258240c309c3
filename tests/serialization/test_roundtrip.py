"""glasstorch.save <-> torch.load and torch.save <-> glasstorch.load, both directions."""

import collections
import io
import pickle

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch.serialization import load, save

from ._util import DTYPES, pair, same, same_tree, shares


def _checkpoint(lib, make):
    """A training checkpoint shaped like model/optimizer state_dicts, in either library."""
    w = make(0, (4, 3))
    model = collections.OrderedDict([
        ("fc.weight", w), ("fc.bias", make(1, (4,))), ("tied.weight", w),
        ("bn.num_batches_tracked", lib.tensor(7)),
    ])
    optim = {"state": {0: {"step": lib.tensor(3.0), "exp_avg": make(2, (4, 3)),
                           "exp_avg_sq": make(3, (4, 3))},
                       1: {"step": lib.tensor(3.0), "momentum_buffer": None}},
             "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                               "weight_decay": 0.0, "amsgrad": False, "foreach": None,
                               "params": [0, 1]}]}
    return {"model": model, "optimizer": optim, "epoch": 3, "loss": 0.25, "name": "run-1",
            "blob": b"\x00\xffbytes", "flags": {True, False}, "shape": lib.Size([2, 3]),
            "dtype": lib.bfloat16, "device": lib.device("cpu"), "nested": [(1, [2.5, None])]}


def _both_checkpoints():
    def mk(lib):
        def make(seed, shape):
            t_pair = pair("float32", shape, seed)
            return t_pair[0] if lib is torch else t_pair[1]
        return _checkpoint(lib, make)
    return mk(torch), mk(gt)


def _via_file(tmp_path, saver, loader, obj, **kw):
    path = tmp_path / "ckpt.pt"
    saver(obj, path)
    return loader(path, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_both_ways(tmp_path, dtype):
    t, g = pair(dtype, (3, 4))
    objs_t = {"x": t, "view": t.t()[1:], "scalar": t[1, 2].clone(), "empty": t[:0]}
    objs_g = {"x": g, "view": g.t()[1:], "scalar": g[1, 2].clone(), "empty": g[:0]}
    got_t = _via_file(tmp_path, save, torch.load, objs_g, weights_only=True)
    same_tree(objs_g, got_t)
    got_g = _via_file(tmp_path, torch.save, load, objs_t)
    same_tree(objs_t, got_g)
    assert shares(got_t["x"], got_t["view"]) and shares(got_g["x"], got_g["view"])
    # and through glasstorch alone
    same_tree(objs_g, _via_file(tmp_path, save, load, objs_g))


def test_training_checkpoint_both_ways(tmp_path):
    ct, cg = _both_checkpoints()
    from_gt = _via_file(tmp_path, save, torch.load, cg, weights_only=True)
    same_tree(ct, from_gt)
    assert type(from_gt["model"]) is collections.OrderedDict
    assert from_gt["model"]["fc.weight"] is from_gt["model"]["tied.weight"]
    from_torch = _via_file(tmp_path, torch.save, load, ct)
    same_tree(cg, from_torch)
    assert from_torch["model"]["fc.weight"] is from_torch["model"]["tied.weight"]
    assert isinstance(from_torch["shape"], gt.Size) and from_torch["dtype"] is gt.bfloat16
    # a second hop keeps everything: torch -> glasstorch -> torch
    again = _via_file(tmp_path, save, torch.load, from_torch)
    same_tree(ct, again)


def test_shared_storage_and_strides(tmp_path):
    base_t = torch.arange(24.0)
    base_g = gt.arange(24.0)

    def views(b):
        m = b.reshape(4, 6)
        return {"base": b, "t": m.t(), "slice": m[1:3, ::2], "exp": b[:3].unsqueeze(0).expand(4, 3),
                "diag": m.diagonal(), "narrow": b[5:9]}

    vt, vg = views(base_t), views(base_g)
    got = _via_file(tmp_path, save, torch.load, vg)
    same_tree(vt, got)
    assert all(shares(got["base"], v) for v in got.values())
    got["base"][5] = -1.0  # writes through views after loading, like the original
    assert got["narrow"][0] == -1.0
    got_g = _via_file(tmp_path, torch.save, load, vt)
    same_tree(vg, got_g)
    assert all(shares(got_g["base"], v) for v in got_g.values())
    got_g["base"][5] = -1.0
    assert got_g["narrow"][0].item() == -1.0
    # storage written once: the file holds a single 96-byte record
    import zipfile
    path = tmp_path / "ckpt.pt"
    save(vg, path)
    records = [i for i in zipfile.ZipFile(path).infolist() if "/data/" in i.filename]
    assert [r.file_size for r in records] == [96]


def test_records_aligned_and_torch_mmap(tmp_path):
    import zipfile
    path = tmp_path / "a.pt"
    save({"a": gt.arange(10.0), "b": gt.ones(3, dtype=gt.int64)}, path)
    raw = path.read_bytes()
    for info in zipfile.ZipFile(path).infolist():
        name_len, extra_len = np.frombuffer(raw[info.header_offset + 26:
                                                info.header_offset + 30], np.uint16)
        if "/data/" in info.filename:
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
    got = torch.load(path, mmap=True)
    same(gt.arange(10.0), got["a"])


def test_requires_grad_and_parameters(tmp_path):
    p = torch.nn.Parameter(torch.ones(2, 2))
    got = _via_file(tmp_path, torch.save, load, {"p": p, "t": torch.zeros(2)})
    assert got["p"].requires_grad and not got["t"].requires_grad
    g = gt.ones(3).requires_grad_()
    back = _via_file(tmp_path, save, torch.load, {"g": g})
    assert back["g"].requires_grad


def test_file_objects_and_bytesio(tmp_path):
    ct, cg = _both_checkpoints()
    buf = io.BytesIO()
    save(cg, buf)
    buf.seek(0)
    same_tree(ct, torch.load(buf))
    buf = io.BytesIO()
    torch.save(ct, buf)
    buf.seek(0)
    same_tree(cg, load(buf))
    with open(tmp_path / "f.pt", "wb") as fh:
        save(cg, fh)
    with open(tmp_path / "f.pt", "rb") as fh:
        same_tree(cg, load(fh))
    same_tree(cg, load(str(tmp_path / "f.pt")))


def test_map_location_forms(tmp_path):
    t, g = pair("float32")
    path = tmp_path / "m.pt"
    torch.save({"x": t}, path)
    for ml in ("cpu", gt.device("cpu"), torch.device("cpu"), {"cpu": "cpu"},
               lambda storage, loc: storage, lambda storage, loc: None):
        same(g, load(path, map_location=ml)["x"])
    seen = []
    load(path, map_location=lambda storage, loc: seen.append(loc))
    assert seen == ["cpu"]
    with pytest.raises(RuntimeError):
        load(path, map_location="cuda")


def test_cuda_location_needs_map_location(tmp_path):
    # Rewrite the location string of a CPU checkpoint to look like one saved on a GPU.
    path = tmp_path / "gpu.pt"
    buf = io.BytesIO()
    torch.save({"x": torch.ones(2)}, buf)
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    with zipfile.ZipFile(path, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            out.writestr(info, data)
    with pytest.raises(RuntimeError, match="map_location"):
        load(path)
    same(gt.ones(2), load(path, map_location="cpu")["x"])
    same(gt.ones(2), load(path, map_location={"cuda:0": "cpu"})["x"])


def test_mmap_maps_without_reading(tmp_path):
    path = tmp_path / "big.pt"
    base = torch.arange(1000.0)
    torch.save({"w": base, "v": base[10:20]}, path)
    got = load(path, mmap=True)
    same(gt.arange(1000.0), got["w"])
    assert shares(got["w"], got["v"])
    import mmap

    from glasstorch._core.storage import root_array
    owner = root_array(got["w"]._data).base
    assert isinstance(getattr(owner, "obj", owner), mmap.mmap)
    got["w"][0] = 5.0  # copy-on-write: the file is untouched
    assert torch.load(path)["w"][0] == 0.0
    with pytest.raises(ValueError):
        load(io.BytesIO(path.read_bytes()), mmap=True)
    legacy = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError):
        load(legacy, mmap=True)


@pytest.mark.parametrize("weights_only", [True, False])
def test_legacy_format(tmp_path, weights_only):
    path = tmp_path / "legacy.pt"
    ct, cg = _both_checkpoints()
    del ct["flags"], cg["flags"]
    torch.save(ct, path, _use_new_zipfile_serialization=False)
    got = load(path, weights_only=weights_only)
    same_tree(cg, got)
    assert got["model"]["fc.weight"] is got["model"]["tied.weight"]
    for dtype in DTYPES:
        t, g = pair(dtype)
        torch.save({"x": t, "v": t[1:]}, path, _use_new_zipfile_serialization=False)
        back = load(path, weights_only=weights_only)
        same(g, back["x"])
        same(g[1:], back["v"])
        assert shares(back["x"], back["v"])


def test_weights_only_false_full_pickle(tmp_path):
    path = tmp_path / "full.pt"
    torch.save({"frac": __import__("fractions").Fraction(1, 3), "t": torch.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="fractions.Fraction"):
        load(path)
    got = load(path, weights_only=False)
    assert got["frac"] == __import__("fractions").Fraction(1, 3)
    same(gt.ones(2), got["t"])


def test_different_dtype_views_of_one_storage_refused(tmp_path):
    t = torch.ones(4)
    with pytest.raises(RuntimeError):
        torch.save([t, t.view(torch.int32)], io.BytesIO())
    g = gt.ones(4)
    with pytest.raises(RuntimeError, match="different types"):
        save([g, g.view(gt.int32)], io.BytesIO())


def test_numpy_backed_tensors_save(tmp_path):
    # a tensor whose root array is not a dense block (from_numpy of a strided array)
    arr = np.arange(20.0, dtype=np.float32)[::2]
    g = gt.from_numpy(arr)
    got = _via_file(tmp_path, save, torch.load, {"g": g, "h": g[1:]})
    np.testing.assert_array_equal(got["g"].numpy(), arr)
    np.testing.assert_array_equal(got["h"].numpy(), arr[1:])


@pytest.mark.parametrize("cut", ["half", "tail", "garbage", "empty", "bad_record"])
def test_corrupt_files_raise_clear_errors(tmp_path, cut):
    buf = io.BytesIO()
    save({"w": gt.arange(100.0)}, buf)
    data = buf.getvalue()
    expected = RuntimeError
    if cut == "half":
        data = data[:len(data) // 2]
    elif cut == "tail":
        data = data[:-10]
    elif cut == "garbage":
        data = b"hello world" * 10
        expected = pickle.UnpicklingError
    elif cut == "empty":
        data = b""
        expected = EOFError
    else:  # a storage record shorter than its tensor
        import zipfile
        src = zipfile.ZipFile(io.BytesIO(data))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for info in src.infolist():
                rec = src.read(info)
                z.writestr(info, rec[:8] if "/data/" in info.filename else rec)
        data = out.getvalue()
    with pytest.raises(expected):
        load(io.BytesIO(data))
    legacy = io.BytesIO()
    torch.save({"w": torch.arange(100.0)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises((RuntimeError, pickle.UnpicklingError)):
        load(io.BytesIO(legacy.getvalue()[:-5]))
    with pytest.raises((RuntimeError, pickle.UnpicklingError)):
        load(io.BytesIO(legacy.getvalue()[:300]))


def test_out_of_bounds_record_refused():
    buf = io.BytesIO()
    save({"w": gt.arange(4.0)}, buf)
    # size 4 -> 5 in the pickle: the tensor would read past its storage
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            rec = src.read(info)
            if info.filename.endswith("data.pkl"):
                assert b"K\x04\x85" in rec
                rec = rec.replace(b"K\x04\x85", b"K\x05\x85", 1)
            z.writestr(info, rec)
    data = out.getvalue()
    with pytest.raises(RuntimeError, match="out of bounds"):
        load(io.BytesIO(data))
    with pytest.raises(RuntimeError):
        torch.load(io.BytesIO(data))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sparse_tensors_keep_their_entries_both_ways():
    # torch's form: _rebuild_sparse_tensor(layout, component tensors), loadable weights_only
    coo = gt.sparse_coo_tensor(gt.tensor([[0, 1, 1], [2, 0, 2]]), gt.tensor([3., 4., 5.]),
                               (2, 3))
    buf = io.BytesIO()
    save({"coo": coo, "coalesced": coo.coalesce(), "csr": coo.to_dense().to_sparse_csr(),
          "layouts": [gt.strided, gt.sparse_coo]}, buf)
    buf.seek(0)
    theirs = torch.load(buf)
    assert theirs["coo"].layout == torch.sparse_coo and not theirs["coo"].is_coalesced()
    assert theirs["coalesced"].is_coalesced()
    assert theirs["csr"].layout == torch.sparse_csr
    for key in ("coo", "coalesced", "csr"):
        np.testing.assert_array_equal(theirs[key].to_dense().numpy(), coo.to_dense().numpy())
    assert theirs["layouts"] == [torch.strided, torch.sparse_coo]
    buf.seek(0)
    ours = load(buf)
    assert ours["csr"].layout == gt.sparse_csr and ours["layouts"] == [gt.strided, gt.sparse_coo]
    np.testing.assert_array_equal(ours["coo"].to_dense().numpy(), coo.to_dense().numpy())

    buf = io.BytesIO()
    dense = torch.tensor([[0., 1.5, 0.], [2., 0., -1.]])
    torch.save({"coo": dense.to_sparse(), "csr": dense.to_sparse_csr()}, buf)
    buf.seek(0)
    back = load(buf)
    assert back["coo"].layout == gt.sparse_coo and back["csr"].layout == gt.sparse_csr
    for key in ("coo", "csr"):
        np.testing.assert_array_equal(back[key].to_dense().numpy(), dense.numpy())


def test_sparse_tensors_pickle_and_deepcopy():
    coo = gt.sparse_coo_tensor(gt.tensor([[0, 1], [1, 0]]), gt.tensor([3., 4.]), (2, 2))
    csr = coo.to_dense().to_sparse_csr()
    for t in (coo, csr):
        back = pickle.loads(pickle.dumps(t))
        assert back.layout == t.layout
        np.testing.assert_array_equal(back.to_dense().numpy(), t.to_dense().numpy())
