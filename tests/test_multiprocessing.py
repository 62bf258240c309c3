"""glasstorch.multiprocessing against torch.multiprocessing: tensors cross processes by shared
memory (fork, spawn, forkserver; both sharing strategies), spawn()'s failures, Hogwild training.

Child-process functions live at module level so spawn/forkserver children can import them.
Every wait has a timeout so a broken transfer fails the test instead of hanging it.
"""

import multiprocessing
import os
import pickle

import pytest

import glasstorch
import glasstorch.multiprocessing as gmp

WAIT = 60  # seconds; generous, only reached when something is broken


@pytest.fixture
def strategy():
    """Restores the sharing strategy a test changes."""
    before = gmp.get_sharing_strategy()
    yield
    gmp.set_sharing_strategy(before)


# ---------------------------------------------------------------- children
def _write_args(t, view, param):
    t[0, 0] = 42.0
    view.mul_(10)
    with glasstorch.no_grad():
        param.fill_(7.0)


def _edit_and_report(t, view, param, out):
    _write_args(t, view, param)
    out.put({"shared": (t.is_shared(), view.is_shared(), param.is_shared()),
             "param": (type(param).__name__, param.requires_grad, param.grad is None),
             "view": (view.storage_offset(), view.stride(), view.shape)})


def _queue_worker(inbox, outbox, done, strategy=None):
    if strategy is not None:
        gmp.set_sharing_strategy(strategy)
    a, v, p, i = inbox.get(timeout=WAIT)
    a.add_(1)
    i.add_(5)
    outbox.put((type(p).__name__, p.requires_grad, v.storage_offset(), v.stride(),
                v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()))
    made = glasstorch.arange(6.0).reshape(2, 3)
    outbox.put((made, made[:, 1:]))
    done.wait(WAIT)  # the parent maps what we sent while we are alive


def _fail_in_child(i, x):
    raise ValueError(f"boom {x} from {i}")


def _exit_with_code(i):
    os._exit(3)


def _kill_self(i):
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


def _fill_slot(i, t):
    t[i] = i + 1


def _hogwild_train(rank, model, x, y, steps):
    opt = glasstorch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        glasstorch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


# ---------------------------------------------------------------- namespace
def test_namespace_mirrors_torch():
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as tmp
    assert set(gmp.__all__) == set(tmp.__all__)
    for name in multiprocessing.__all__:
        assert getattr(gmp, name) is getattr(multiprocessing, name), name
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "SpawnContext", "ENV_VAR_PARALLEL_START"):
        assert hasattr(gmp, name) and hasattr(tmp, name), name
    assert glasstorch.multiprocessing is gmp
    del torch


def test_sharing_strategies_match_torch(strategy):
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as tmp
    assert gmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert gmp.get_sharing_strategy() == tmp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError) as ours:
        gmp.set_sharing_strategy("nope")
    with pytest.raises(AssertionError) as theirs:
        tmp.set_sharing_strategy("nope")
    assert str(ours.value).split(",")[0] == str(theirs.value).split(",")[0]
    gmp.set_sharing_strategy("file_system")
    assert gmp.get_sharing_strategy() == "file_system"
    del torch


# ---------------------------------------------------------------- within one process
def _roundtrip_facts(lib, mp):
    q = mp.get_context("fork").Queue()
    a = lib.arange(12.0).reshape(3, 4)
    q.put((a, a[1:, ::2]))
    b, v = q.get(timeout=WAIT)
    r, w = mp.Pipe()
    e = lib.empty(0, 3)
    w.send(e)
    e2 = r.recv()
    x = lib.ones(2, requires_grad=True)
    w.send(x)
    x2 = r.recv()
    return {"sender_shared": a.is_shared(), "same_memory": b.data_ptr() == a.data_ptr(),
            "view": (v.storage_offset(), v.stride(), tuple(v.shape), v.tolist()),
            "view_same_storage":
                v.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(),
            "rebuilt_is_view": v._base is not None,
            "empty": (e.is_shared(), e2.is_shared(), tuple(e2.shape)),
            "requires_grad": (x2.requires_grad, x2.is_leaf, x2.data_ptr() == x.data_ptr())}


def test_same_process_roundtrip_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as tmp
    ours = _roundtrip_facts(glasstorch, gmp)
    assert ours == _roundtrip_facts(torch, tmp)
    assert ours["same_memory"] and ours["sender_shared"]


def test_non_leaf_requiring_grad_is_refused_like_torch():
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as tmp
    messages = []
    for lib, mp in ((glasstorch, gmp), (torch, tmp)):
        r, w = mp.Pipe()
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Cowardly refusing") as info:
            w.send(x * 2)
        messages.append(str(info.value))
        w.send((x * 2).detach())  # detached it goes
        assert r.recv().tolist() == [2.0, 2.0, 2.0]
    assert messages[0] == messages[1]


def test_untyped_storage_is_sent_shared():
    t = glasstorch.arange(4, dtype=glasstorch.int32)
    r, w = gmp.Pipe()
    w.send(t.untyped_storage())
    s = r.recv()
    assert t.is_shared() and s.is_shared()
    assert s.data_ptr() == t.untyped_storage().data_ptr() and s.nbytes() == 16


def test_process_exceptions_pickle():
    e = gmp.ProcessExitedException("process 1 terminated with signal SIGTERM", 1, 99, -15,
                                   "SIGTERM")
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.msg, e2.error_index, e2.error_pid, e2.exit_code, e2.signal_name) == \
        (e.msg, 1, 99, -15, "SIGTERM")
    r = pickle.loads(pickle.dumps(gmp.ProcessRaisedException("trace", 0, 5)))
    assert isinstance(r, gmp.ProcessRaisedException) and r.error_pid == 5


# ---------------------------------------------------------------- fork
def test_fork_child_writes_into_shared_tensor():
    ctx = gmp.get_context("fork")
    t = glasstorch.zeros(4, 3).share_memory_()
    p = glasstorch.nn.Parameter(glasstorch.ones(2)).share_memory_()
    private = glasstorch.zeros(2, 2)  # not shared: the forked child writes its own copy
    proc = ctx.Process(target=_write_args, args=(t, t[1:, 1:], p))
    proc.start()
    proc.join(WAIT)
    assert proc.exitcode == 0
    assert t[0, 0].item() == 42.0 and t[1:, 1:].sum().item() == 0  # 0 * 10
    assert p.tolist() == [7.0, 7.0]
    proc = ctx.Process(target=_write_args, args=(private, private[1:], p))
    proc.start()
    proc.join(WAIT)
    assert proc.exitcode == 0
    assert private.tolist() == [[0.0, 0.0], [0.0, 0.0]] and not private.is_shared()


@pytest.mark.parametrize("method,strat", [("fork", "file_descriptor"), ("fork", "file_system"),
                                          ("forkserver", "file_descriptor")])
def test_queue_of_tensors(method, strat, strategy):
    gmp.set_sharing_strategy(strat)
    ctx = gmp.get_context(method)
    inbox, outbox, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_queue_worker, args=(inbox, outbox, done, strat))
    proc.start()
    try:
        a = glasstorch.zeros(3, 4)
        p = glasstorch.nn.Parameter(glasstorch.ones(2))
        i = glasstorch.arange(3)
        inbox.put((a, a[1:, ::2], p, i))
        cls, req, offset, stride, same_storage = outbox.get(timeout=WAIT)
        assert (cls, req, offset, stride, same_storage) == ("Parameter", True, 4, (4, 2), True)
        assert a.is_shared() and p.is_shared() and i.is_shared()
        assert a.tolist() == [[1.0] * 4] * 3 and i.tolist() == [5, 6, 7]
        made, view = outbox.get(timeout=WAIT)
        assert made.is_shared() and view.storage_offset() == 1 and view.stride() == (3, 1)
        view.zero_()  # a view of the child's tensor: the write lands in the same storage
        assert made.tolist() == [[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]
        if strat == "file_system":
            names = [f for f in os.listdir("/dev/shm") if f.startswith("glasstorch_fs_")]
            assert names
    finally:
        done.set()
        proc.join(WAIT)
    assert proc.exitcode == 0
    if strat == "file_system":
        del a, p, i, made, view
        import gc
        gc.collect()
        left = [f for f in os.listdir("/dev/shm")
                if f.startswith(f"glasstorch_fs_{os.getpid()}_")
                or f.startswith(f"glasstorch_fs_{proc.pid}_")]
        assert left == []  # the last holder removed each segment


def test_start_processes_reports_exit_code_and_signal():
    with pytest.raises(gmp.ProcessExitedException) as info:
        gmp.start_processes(_exit_with_code, nprocs=1, start_method="fork")
    e = info.value
    assert str(e) == "process 0 terminated with exit code 3"
    assert (e.exit_code, e.signal_name, e.error_index) == (3, None, 0)
    with pytest.raises(gmp.ProcessExitedException) as info:
        gmp.start_processes(_kill_self, nprocs=1, start_method="fork")
    e = info.value
    assert str(e) == "process 0 terminated with signal SIGKILL"
    assert (e.exit_code, e.signal_name) == (-9, "SIGKILL")


def test_start_processes_without_join_returns_context():
    t = glasstorch.zeros(3).share_memory_()
    ctx = gmp.start_processes(_fill_slot, args=(t,), nprocs=3, join=False, start_method="fork")
    assert isinstance(ctx, gmp.ProcessContext) and len(ctx.pids()) == 3
    while not ctx.join(WAIT):
        pass
    assert ctx.join() is True
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_hogwild_training_updates_the_shared_model():
    glasstorch.manual_seed(0)
    model = glasstorch.nn.Linear(4, 1)
    model.share_memory()
    x = glasstorch.randn(64, 4)
    y = x @ glasstorch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    before = model.weight.detach().clone()
    loss_before = glasstorch.nn.functional.mse_loss(model(x), y).item()
    ctx = gmp.get_context("fork")
    procs = [ctx.Process(target=_hogwild_train, args=(r, model, x, y, 40)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(WAIT)
        assert p.exitcode == 0
    assert not glasstorch.equal(model.weight.detach(), before)
    assert glasstorch.nn.functional.mse_loss(model(x), y).item() < loss_before / 10


# ---------------------------------------------------------------- spawn
def test_spawn_process_args_are_shared():
    ctx = gmp.get_context("spawn")
    t = glasstorch.arange(16.0).reshape(4, 4)
    view = t[1:, ::2]
    param = glasstorch.nn.Parameter(glasstorch.ones(3))
    param.grad = glasstorch.ones(3)
    out = ctx.Queue()
    proc = ctx.Process(target=_edit_and_report, args=(t, view, param, out))
    proc.start()
    report = out.get(timeout=WAIT)
    proc.join(WAIT)
    assert proc.exitcode == 0
    assert report == {"shared": (True, True, True), "param": ("Parameter", True, True),
                      "view": (4, (4, 2), glasstorch.Size([3, 2]))}
    assert t.is_shared() and not param.grad.is_shared()  # as torch: the grad stays behind
    expected = glasstorch.arange(16.0).reshape(4, 4)
    expected[0, 0] = 42.0
    expected[1:, ::2] *= 10
    assert t.tolist() == expected.tolist()
    assert param.tolist() == [7.0, 7.0, 7.0]


def test_spawn_child_exception_is_raised_like_torch():
    # another start_method only warns (spawn() always spawns), as in torch
    with pytest.raises(gmp.ProcessRaisedException) as info, \
            pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        gmp.spawn(_fail_in_child, args=(5,), nprocs=1, start_method="fork")
    e = info.value
    assert e.error_index == 0 and isinstance(e.error_pid, int)
    msg = str(e)
    assert msg.startswith("\n\n-- Process 0 terminated with the following error:\n"
                          "Traceback (most recent call last):\n")
    assert msg.endswith("ValueError: boom 5 from 0\n")
    assert "_fail_in_child" in msg

