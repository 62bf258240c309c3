"""glasstorch.utils.safetensors against safetensors.torch, both directions."""

import pytest
import torch

import glasstorch as gt

from ._util import pair, same

pytest.importorskip("safetensors")
from safetensors.torch import load_file as torch_load_file  # noqa: E402
from safetensors.torch import save_file as torch_save_file  # noqa: E402

from glasstorch.utils import safetensors as st  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64"]


def test_both_directions_every_dtype(tmp_path):
    tt, gg = {}, {}
    for i, d in enumerate(DTYPES):
        tt[d], gg[d] = pair(d, (2, 3), seed=i)
    tt["scalar"], gg["scalar"] = torch.tensor(1.5), gt.tensor(1.5)
    tt["empty"], gg["empty"] = torch.zeros(0, 4), gt.zeros(0, 4)
    st.save_file(gg, tmp_path / "g.safetensors", metadata={"format": "pt"})
    got = torch_load_file(tmp_path / "g.safetensors")
    assert sorted(got) == sorted(tt)
    for k in tt:
        same(tt[k], got[k])
    torch_save_file(tt, tmp_path / "t.safetensors")
    back = st.load_file(tmp_path / "t.safetensors")
    for k in gg:
        same(gg[k], back[k])
    for k, v in st.load(st.save(gg)).items():
        same(gg[k], v)


def test_safe_open_lazy_reads(tmp_path):
    t, g = pair("float32", (4, 5))
    torch_save_file({"w": t}, tmp_path / "w.safetensors", metadata={"k": "v"})
    with st.safe_open(tmp_path / "w.safetensors", framework="pt") as f:
        assert f.keys() == ["w"] and f.metadata() == {"k": "v"}
        same(g, f.get_tensor("w"))
        sl = f.get_slice("w")
        assert sl.get_shape() == [4, 5]
        same(g[1:3].contiguous(), sl[1:3], offset=False)


def test_refusals_match_safetensors_torch(tmp_path):
    t = torch.ones(3, 4)
    g = gt.ones(3, 4)
    with pytest.raises(ValueError):
        torch_save_file({"x": t.t()}, tmp_path / "a")
    with pytest.raises(ValueError):
        st.save_file({"x": g.t()}, tmp_path / "a")
    with pytest.raises(RuntimeError):
        torch_save_file({"x": t, "y": t[0]}, tmp_path / "a")
    with pytest.raises(RuntimeError):
        st.save_file({"x": g, "y": g[0]}, tmp_path / "a")
    # disjoint slices of one buffer are fine
    st.save_file({"x": g[0], "y": g[1]}, tmp_path / "b")
    assert sorted(torch_load_file(tmp_path / "b")) == ["x", "y"]
