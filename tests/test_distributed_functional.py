"""torch.distributed._functional_collectives, distributed.constants and fully_shard on one
process, against torch's on a gloo group of one (the 2-rank behaviour is in
tests/distributed/test_fsdp2.py), and gradcheck of the differentiable collectives."""

import importlib
import socket
import warnings

import pytest

import glasstorch

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed._functional_collectives")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_group(L, fn):
    dist = L.distributed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}",
                            world_size=1, rank=0)
    try:
        return fn(L, dist)
    finally:
        dist.destroy_process_group()


def record(L, fn, x):
    """What ``fn()`` gives (values, shape, the gradient of a weighted sum, the warnings'
    kinds) or the error it raises (type, first line)."""
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = fn()
            f = importlib.import_module(f"{L.__name__}.distributed._functional_collectives")
            y = f.wait_tensor(y)
            weights = L.arange(y.numel(), dtype=y.dtype).reshape(y.shape)
            try:
                g = L.autograd.grad((y * weights).sum(), x)[0].tolist()
            except RuntimeError as e:
                g = str(e)
        return (y.tolist(), tuple(y.shape), y.requires_grad, g,
                sorted({type(m.message).__name__ for m in w}))
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e).splitlines()[0]


def functional(L, dist):
    f = importlib.import_module(f"{L.__name__}.distributed._functional_collectives")
    W = dist.group.WORLD
    x = L.arange(6.).reshape(2, 3).requires_grad_()
    mesh = dist.device_mesh.init_device_mesh("cpu", (1,))
    cases = [
        lambda: f.all_reduce(x, "sum", W), lambda: f.all_reduce(x, "avg", W),
        lambda: f.all_reduce(x, "MAX", W), lambda: f.all_gather_tensor(x, 1, W),
        lambda: f.all_gather_single(x, 0, W), lambda: f.all_gather_tensor_autograd(x, -1, W),
        lambda: f.reduce_scatter_tensor(x, "sum", 1, W),
        lambda: f.reduce_scatter_tensor_autograd(x, "avg", 0, W),
        lambda: f.all_to_all_single(x, None, None, W),
        lambda: f.all_to_all_single_autograd(x, [2], [2], W),
        lambda: f.all_to_all_single(x, [1], [1], W), lambda: f.broadcast(x, 0, W),
        lambda: f.permute_tensor(x, [0], W), lambda: f.permute_tensor(x[0], [0], W),
        lambda: f.all_reduce(x, "bogus", W), lambda: f.all_reduce(x, "sum", None),
        lambda: f.all_reduce(x, "sum", (1, 2)), lambda: f.all_reduce(x, "sum", "nosuch"),
        lambda: f.all_reduce(x, "sum", W.group_name), lambda: f.all_reduce(x, "sum", [0]),
        lambda: f.all_reduce(x, "sum", mesh), lambda: f.all_reduce(x, "sum", (mesh, 0)),
        lambda: f.all_gather_tensor(x, 5, W),
        lambda: f.all_reduce_coalesced([x, x * 2], "sum", W)[1],
        lambda: f.all_gather_into_tensor_coalesced([x], W)[0],
        lambda: f.reduce_scatter_tensor_coalesced([x], "sum", [1], W)[0]]
    out = [record(L, fn, x) for fn in cases]
    out.append(sorted(f.REDUCE_OP_TO_STR.values()))
    c = importlib.import_module(f"{L.__name__}.distributed.constants")
    out.append((c.default_pg_timeout, c.default_pg_nccl_timeout, c.__all__))
    return out


def test_functional_collectives_match_torch():
    assert in_group(glasstorch, functional) == in_group(torch, functional)


def test_wait_tensor_refuses_what_is_not_a_tensor():
    f = glasstorch.distributed._functional_collectives
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor'"):
        f.wait_tensor(3)


def test_functional_collectives_gradcheck():
    def run(L, dist):
        f = L.distributed._functional_collectives
        W = dist.group.WORLD
        x = L.randn(4, 3, dtype=L.float64, requires_grad=True)
        for fn in (lambda t: f.all_reduce(t, "sum", W),
                   lambda t: f.all_gather_single(t, 1, W),
                   lambda t: f.reduce_scatter_single(t, "sum", 1, W),
                   lambda t: f.all_to_all_single(t, [4], [4], W) * t):
            assert L.autograd.gradcheck(fn, (x,))
            assert L.autograd.gradgradcheck(fn, (x,))
    in_group(glasstorch, run)


def sharded_mlp(L, dist):
    F = importlib.import_module(f"{L.__name__}.distributed.fsdp")
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 3))
    ref = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 3))
    ref.load_state_dict(m.state_dict())
    F.fully_shard(m[0])
    out = [F.fully_shard(m) is m, type(m).__name__, type(m[0]).__name__,
           isinstance(m, F.FSDPModule), isinstance(m[2], F.FSDPModule), repr(m),
           [(k, isinstance(p, T.DTensor), repr(p.placements), tuple(p.shape))
            for k, p in m.named_parameters()], list(m.state_dict())]
    x = L.randn(5, 4, generator=L.Generator().manual_seed(1))
    y = m(x)
    y.sum().backward()
    ref(x).sum().backward()
    out += [type(y).__name__, y.grad_fn.name(),
            [(isinstance(p.grad, T.DTensor), (p.grad.full_tensor() - q.grad).abs().max().item())
             for p, q in zip(m.parameters(), ref.parameters())]]
    m.unshard()
    out.append(type(m[2].weight).__name__)
    m.reshard()
    out.append(isinstance(m[2].weight, T.DTensor))
    try:
        F.fully_shard(m[0])
    except AssertionError as e:
        out.append(str(e).splitlines()[0])
    return out


def test_fully_shard_on_one_process_matches_torch():
    assert in_group(glasstorch, sharded_mlp) == in_group(torch, sharded_mlp)


def test_fully_shard_mixed_precision_and_import_paths():
    from glasstorch.distributed._composable.fsdp import fully_shard as old_path
    F = glasstorch.distributed.fsdp
    assert old_path is F.fully_shard

    def run(L, dist):
        m = L.nn.Linear(3, 2)
        F.fully_shard(m, mp_policy=F.MixedPrecisionPolicy(param_dtype=L.float64,
                                                          output_dtype=L.float32))
        y = m(L.ones(1, 3))
        y.sum().backward()
        return y.dtype, m.weight.dtype, m.weight.grad.dtype
    assert in_group(glasstorch, run) == (glasstorch.float32,) * 3


def test_older_import_paths_match_torch(tmp_path):
    def run(L):
        d = L.distributed
        c10d = importlib.import_module(f"{L.__name__}.distributed.distributed_c10d")
        old = importlib.import_module(f"{L.__name__}.distributed._tensor")
        fsdp1 = importlib.import_module(
            f"{L.__name__}.distributed.fsdp.fully_sharded_data_parallel")
        dcp = importlib.import_module(f"{L.__name__}.distributed.checkpoint")
        out = [old.DTensor is d.tensor.DTensor, old.Shard is d.tensor.Shard,
               fsdp1.CPUOffload is d.fsdp.CPUOffload, c10d.all_reduce is d.all_reduce,
               c10d.init_process_group is d.init_process_group]
        try:
            c10d._get_default_group()
        except ValueError as e:
            out.append(str(e))
        folder = tmp_path / L.__name__
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dcp.save_state_dict({"a": L.ones(2)}, dcp.FileSystemWriter(folder), no_dist=True)
            state = {"a": L.zeros(2)}
            dcp.load_state_dict(state, dcp.FileSystemReader(folder), no_dist=True)
        out += [state["a"].tolist(), [(type(m.message).__name__, str(m.message)) for m in w]]
        out.append(in_group(L, lambda L, dist: c10d._get_default_group() is dist.group.WORLD))
        return out
    assert run(glasstorch) == run(torch)


def test_register_fsdp_forward_method_matches_torch():
    def run(L, dist):
        F = importlib.import_module(f"{L.__name__}.distributed.fsdp")

        class Scaled(L.nn.Linear):
            def total(self, k):
                return self.weight.sum() * k
        L.manual_seed(0)
        m = Scaled(3, 2)
        F.fully_shard(m)
        F.register_fsdp_forward_method(m, "total")
        v = m.total(2.0)
        v.backward()
        return (type(v).__name__, round(v.item(), 5), type(m.weight.grad).__name__,
                m.weight.grad.full_tensor().tolist())
    assert in_group(glasstorch, run) == in_group(torch, run)
