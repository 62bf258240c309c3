"""torch.device parsing and CPU-only behaviour."""

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:0", "cuda:1", "mps", "meta"])
def test_device_parsing_matches_torch(spec):
    ours, theirs = gt.device(spec), torch.device(spec)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)


def test_device_with_index_and_equality():
    assert gt.device("cuda", 1) == gt.device("cuda:1")
    assert (gt.device("cpu") == "cpu") is (torch.device("cpu") == "cpu") is False
    assert repr(gt.device("cuda", 1)) == repr(torch.device("cuda", 1))
    assert len({gt.device("cpu"), gt.device("cpu")}) == 1


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "cpu:0:1"])
def test_bad_device_strings_raise_like_torch(bad):
    with pytest.raises(RuntimeError):
        torch.device(bad)
    with pytest.raises(RuntimeError):
        gt.device(bad)


def test_tensors_live_on_cpu_and_cuda_requests_fail_clearly():
    x = gt.ones(2)
    assert x.device == gt.device("cpu") and x.is_cpu and not x.is_cuda
    assert x.cpu() is x and x.to("cpu") is x
    assert gt.cuda.is_available() is False and gt.cuda.device_count() == 0
    for make in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: gt.zeros(2, device="cuda:0")):
        with pytest.raises(AssertionError, match="CUDA"):  # torch's CPU build: the same type
            make()
    gt.cuda.manual_seed_all(0)  # harmless without CUDA, as in torch
