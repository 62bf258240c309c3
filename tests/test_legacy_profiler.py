"""torch.autograd.profiler (the legacy API) against torch's on a CPU build."""

import warnings

import pytest

import glasstorch as gt
import glasstorch.autograd.profiler as gprof

torch = pytest.importorskip("torch")


def test_legacy_profile_records_ops():
    x = gt.ones(3, requires_grad=True)
    with gprof.profile(record_shapes=True) as prof:
        with gprof.record_function("block"):
            (x * 2).sum().backward()
    names = {e.name for e in prof.function_events}
    assert "block" in names and any("mul" in n for n in names)
    assert "block" in prof.key_averages().table()


def test_disabled_and_device_options_behave_as_torch():
    for lib, prof in ((torch, torch.autograd.profiler), (gt, gprof)):
        with prof.profile(enabled=False) as p:
            lib.ones(2) + 1
        assert p is None
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with prof.profile(use_cuda=True):
                pass
        assert any("CUDA is not available" in str(m.message) for m in w)
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            with prof.emit_nvtx():
                pass
    assert gprof.kineto_available() is False and gt.profiler.kineto_available() is False

