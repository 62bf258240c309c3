"""torch.cuda on a machine without CUDA, and the device-generic torch.Stream/torch.Event: each
call returns what torch's CPU build returns, or raises the same exception type."""

import pytest

import glasstorch
import glasstorch.cuda.graphs
import glasstorch.cuda.nvtx
from tests._compare import outcome

torch = pytest.importorskip("torch")
if torch.cuda.is_available():  # the comparison is with torch's behaviour without CUDA
    pytest.skip("torch sees a CUDA device here", allow_module_level=True)
import torch.cuda.nvtx  # noqa: E402

CALLS = {
    "is_available": lambda c: c.is_available(),
    "device_count": lambda c: c.device_count(),
    "is_initialized": lambda c: c.is_initialized(),
    "is_bf16_supported": lambda c: c.is_bf16_supported(),
    "is_tf32_supported": lambda c: c.is_tf32_supported(),
    "get_arch_list": lambda c: c.get_arch_list(),
    "get_gencode_flags": lambda c: c.get_gencode_flags(),
    "manual_seed": lambda c: c.manual_seed(1),
    "manual_seed_all": lambda c: c.manual_seed_all(1),
    "seed": lambda c: c.seed(),
    "seed_all": lambda c: c.seed_all(),
    "initial_seed": lambda c: c.initial_seed(),
    "init": lambda c: c.init(),
    "default_generators": lambda c: c.default_generators,
    "get_rng_state": lambda c: c.get_rng_state(),
    "get_rng_state_all": lambda c: c.get_rng_state_all(),
    "set_rng_state_all": lambda c: c.set_rng_state_all([]),
    "synchronize": lambda c: c.synchronize(),
    "current_device": lambda c: c.current_device(),
    "get_device_name": lambda c: c.get_device_name(),
    "get_device_properties": lambda c: c.get_device_properties(0),
    "get_device_capability": lambda c: c.get_device_capability(),
    "set_device(-1)": lambda c: c.set_device(-1),
    "set_device(cpu)": lambda c: c.set_device("cpu"),
    "memory_allocated": lambda c: c.memory_allocated(),
    "memory_allocated(cpu)": lambda c: c.memory_allocated("cpu"),
    "max_memory_allocated": lambda c: c.max_memory_allocated(),
    "memory_reserved": lambda c: c.memory_reserved(),
    "max_memory_reserved": lambda c: c.max_memory_reserved(),
    "memory_stats": lambda c: dict(c.memory_stats()),
    "memory_stats_as_nested_dict": lambda c: c.memory_stats_as_nested_dict(),
    "reset_peak_memory_stats(cpu)": lambda c: c.reset_peak_memory_stats("cpu"),
    "empty_cache": lambda c: c.empty_cache(),
    "ipc_collect": lambda c: c.ipc_collect(),
    "mem_get_info": lambda c: c.mem_get_info(),
    "set_per_process_memory_fraction": lambda c: c.set_per_process_memory_fraction(0.5),
    "Stream()": lambda c: c.Stream(),
    "Stream(cpu)": lambda c: c.Stream(device="cpu"),
    "Event()": lambda c: c.Event(),
    "Event(enable_timing)": lambda c: c.Event(enable_timing=True),
    "current_stream": lambda c: c.current_stream(),
    "default_stream": lambda c: c.default_stream(),
    "set_stream(None)": lambda c: c.set_stream(None),
    "stream(None)": lambda c: c.stream(None).__enter__(),
    "StreamContext(None)": lambda c: type(c.StreamContext(None)).__name__,
    "CUDAGraph()": lambda c: c.CUDAGraph(),
    "graph(None)": lambda c: c.graph(None),
    "graph_pool_handle": lambda c: c.graph_pool_handle(),
    "is_current_stream_capturing": lambda c: c.is_current_stream_capturing(),
    "device(-1)": lambda c: c.device(-1).__enter__(),
    "device(0)": lambda c: c.device(0).__enter__(),
    "device(0).idx": lambda c: c.device(0).idx,
    "device(cpu)": lambda c: c.device("cpu"),
    "nvtx.range_push": lambda c: c.nvtx.range_push("a"),
    "nvtx.range_pop": lambda c: c.nvtx.range_pop(),
    "nvtx.mark": lambda c: c.nvtx.mark("a"),
    "nvtx.range": lambda c: c.nvtx.range("a").__enter__(),
    "graphs module": lambda c: c.graphs.CUDAGraph is c.CUDAGraph,
}


@pytest.mark.parametrize("name", list(CALLS))
def test_cuda_call_matches_torch_cpu_build(name):
    mine = outcome(lambda: CALLS[name](glasstorch.cuda))
    theirs = outcome(lambda: CALLS[name](torch.cuda))
    assert mine == theirs


def test_make_graphed_callables_needs_cuda_graphs():
    for L in (glasstorch, torch):
        with pytest.raises(RuntimeError):
            L.cuda.make_graphed_callables(L.nn.Linear(2, 2), (L.ones(1, 2),))


def test_device_of_a_cpu_tensor_is_a_no_op():
    for L in (glasstorch, torch):
        ctx = L.cuda.device_of(L.ones(1))
        assert ctx.idx == -1
        with ctx:
            pass


def test_stream_context_accepts_a_generic_stream():
    for L in (glasstorch, torch):
        with L.cuda.stream(L.Stream()):
            pass


GENERIC = {
    "Stream()": lambda L: repr(L.Stream()),
    "Stream(cpu)": lambda L: repr(L.Stream("cpu")),
    "Stream(device=cpu, priority)": lambda L: repr(L.Stream(device="cpu", priority=-1)),
    "Stream(meta)": lambda L: (repr(L.Stream("meta")), L.Stream("meta").device_type),
    "Stream(cuda)": lambda L: L.Stream("cuda"),
    "Stream(0)": lambda L: L.Stream(0),
    "Stream(cpu, 0)": lambda L: L.Stream("cpu", 0),
    "stream attrs": lambda L: (str(L.Stream().device), L.Stream().device_type,
                               L.Stream().device_index, L.Stream().stream_id,
                               L.Stream().query(), L.Stream().synchronize(),
                               L.Stream().is_capturing()),
    "stream eq": lambda L: (L.Stream() == L.Stream(), L.Stream() == 3),
    "stream native_handle": lambda L: L.Stream().native_handle,
    "stream wait_event": lambda L: L.Stream().wait_event(L.Event()),
    "stream wait_stream": lambda L: L.Stream().wait_stream(L.Stream()),
    "stream record_event": lambda L: L.Stream().record_event(),
    "stream with": lambda L: (lambda s: s.__enter__() is s)(L.Stream()),
    "Event()": lambda L: repr(L.Event()),
    "Event(timing)": lambda L: repr(L.Event("cpu", enable_timing=True, blocking=True)),
    "Event(meta)": lambda L: repr(L.Event("meta")),
    "Event(cuda)": lambda L: L.Event("cuda"),
    "event attrs": lambda L: (str(L.Event().device), L.Event().event_id, L.Event().query(),
                              L.Event().synchronize(), L.Event().wait(), L.Event().wait(
                                  L.Stream())),
    "event record": lambda L: L.Event().record(),
    "event record(stream)": lambda L: L.Event().record(L.Stream()),
    "event elapsed untimed": lambda L: L.Event().elapsed_time(L.Event()),
    "event elapsed timed": lambda L: L.Event(enable_timing=True).elapsed_time(
        L.Event(enable_timing=True)),
    "event ipc": lambda L: L.Event().ipc_handle(),
}


@pytest.mark.parametrize("name", list(GENERIC))
def test_generic_stream_and_event_match_torch(name):
    mine = outcome(lambda: GENERIC[name](glasstorch))
    theirs = outcome(lambda: GENERIC[name](torch))
    assert mine == theirs
