"""glasstorch.memory: storage tracking, peaks, and the breakdown by holder."""

import gc

import numpy as np
import pytest

import glasstorch as torch
from glasstorch import memory
from glasstorch._core.storage import root_array
from glasstorch.autograd.graph import Node, SavedTensor


@pytest.fixture(autouse=True)
def _tracking():
    memory.disable()
    yield
    memory.disable()


def _live_storage_bytes():
    """Independent count: distinct root arrays of every live tensor (incl. saved ones) and
    of the arrays autograd nodes keep directly."""
    roots = {}
    for o in gc.get_objects():
        if issubclass(type(o), Node) and o._saved:
            for v in o._saved.values():
                if isinstance(v, np.ndarray):
                    r = root_array(v)
                    roots[id(r)] = r.nbytes
        if issubclass(type(o), torch.Tensor):
            r = root_array(o._data)
            roots[id(r)] = r.nbytes
        elif type(o) is SavedTensor and o._tensor is not None:
            r = root_array(o._tensor._data)
            roots[id(r)] = r.nbytes
    return sum(roots.values())


def test_allocated_counts_new_and_freed_storages():
    base = memory.memory_allocated()
    a = torch.empty(1000, dtype=torch.float32)
    assert memory.memory_allocated() == base + 4000
    v = a[10:20].view(2, 5)  # views share the storage: nothing new
    assert memory.memory_allocated() == base + 4000
    del a
    assert memory.memory_allocated() == base + 4000  # the view keeps the storage alive
    del v
    assert memory.memory_allocated() == base


def test_peak_and_reset():
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    a = torch.zeros(256, 256, dtype=torch.float64)
    del a
    assert memory.max_memory_allocated() >= base + 256 * 256 * 8
    assert memory.memory_allocated() == base
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == base
    stats = memory.memory_stats()
    assert stats["allocated_bytes.all.current"] == base
    assert stats["allocated_bytes.all.peak"] == base
    assert list(stats) == sorted(stats)


def test_seeded_with_existing_tensors_and_off_by_default():
    assert not memory.is_enabled()
    keep = torch.ones(123, dtype=torch.int8)
    memory.enable()
    assert memory.memory_allocated() >= 123
    assert any(s["total_size"] == 123 and s["shape"] == (123,) for s in memory.memory_snapshot())
    del keep


def test_mlp_training_step_breakdown():
    gc.collect()
    # what other tests' objects still hold (a compiled function's cache keeps its module)
    base = memory.memory_breakdown()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(1024, 32), torch.randint(0, 10, (1024,))
    memory.reset_peak_memory_stats()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    fwd = memory.memory_breakdown()
    assert sum(fwd.values()) == memory.memory_allocated() == _live_storage_bytes()
    params = sum(p.numel() * 4 for p in model.parameters())
    assert fwd["parameters"] - base["parameters"] == params
    # activations saved for backward outweigh the parameters
    assert fwd["saved for backward"] > 2 * params
    loss.backward()
    opt.step()
    after = memory.memory_breakdown()
    assert sum(after.values()) == memory.memory_allocated() == _live_storage_bytes()
    assert after["gradients"] - base["gradients"] == params
    assert after["optimizer state"] >= 2 * params  # exp_avg + exp_avg_sq
    assert after["saved for backward"] < fwd["saved for backward"]  # released by backward
    assert fwd["saved for backward"] + after["optimizer state"] > 3 * params
    assert memory.max_memory_allocated() >= max(sum(fwd.values()), sum(after.values()))
    text = memory.memory_summary()
    for cat in memory.CATEGORIES:
        assert cat in text
    assert "total" in text
    del loss


def test_snapshot_total_matches():
    memory.enable()
    a = torch.randn(10, 10)
    segs = memory.memory_snapshot()
    assert sum(s["total_size"] for s in segs) == memory.memory_allocated()
    del a
