"""DeviceMesh, DTensor, ZeroRedundancyOptimizer and distributed checkpoint in one process
(world size 1, no MPI needed) against torch's: results and the errors of misuse."""

import importlib
import itertools

import pytest

torch = pytest.importorskip("torch")

_ports = itertools.count(29971)


def outcome(fn):
    """What ``fn()`` returns, or the name of what it raises (dcp's CheckpointException is a
    BaseException)."""
    try:
        return fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - the type is what the test compares
        return type(e).__name__


def scenario(L, folder):
    d = L.distributed
    d.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{next(_ports)}", world_size=1,
                         rank=0)
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    Z = importlib.import_module(f"{L.__name__}.distributed.optim").ZeroRedundancyOptimizer
    DCP = importlib.import_module(f"{L.__name__}.distributed.checkpoint")
    out = []
    try:
        mesh = T.init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
        mesh2 = T.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
        out.append(outcome(lambda: T.init_device_mesh("cpu", (2,))))
        out.append(outcome(lambda: mesh2.get_group()))
        out.append(outcome(lambda: mesh["nope"]))
        out.append((mesh2["tp"].mesh.tolist(), mesh2.size(), mesh.mesh.dtype == L.int32,
                    mesh.get_coordinate()))
        x = T.distribute_tensor(L.arange(6.).reshape(2, 3), mesh, [T.Shard(1)])
        out.append((x.shape, x.stride(), x.ndim, x.numel(), len(x), x.size(1), x.dtype,
                    x.placements, x.is_contiguous()))
        out.append(outcome(lambda: x + L.ones(2, 3)))
        out.append(outcome(lambda: (x + L.tensor(1.0)).full_tensor().tolist()))
        out.append(outcome(lambda: x.redistribute(mesh, [T.Partial()])))
        out.append(outcome(lambda: T.distribute_tensor(L.ones(2), mesh, [T.Shard(0)] * 2)))
        out.append(outcome(lambda: T.distribute_tensor(L.ones(2), mesh, [T.Shard(3)])))
        out.append(repr(T.Shard(1)) + repr(T.Replicate()) + repr(T.Partial()) + str(T.Shard(1)))
        out.append((x * 2).sum().full_tensor().item())
        y = x.clone()
        z = y
        y += 1
        out.append((y is z, y.placements, y.full_tensor().tolist()))
        w = L.nn.Parameter(T.distribute_tensor(L.ones(3, 2), mesh))
        out.append((isinstance(w, T.DTensor), isinstance(w, L.nn.Parameter), w.requires_grad))
        m = L.nn.Linear(3, 2)
        opt = Z(m.parameters(), L.optim.SGD, lr=0.1)
        out.append(outcome(lambda: opt.state_dict()))
        out.append(outcome(lambda: Z([], L.optim.SGD, lr=0.1)))
        out.append(outcome(lambda: Z(L.ones(2), L.optim.SGD, lr=0.1)))
        m(L.ones(1, 3)).sum().backward()
        opt.step()
        opt.consolidate_state_dict()
        out.append(opt.state_dict()["param_groups"][0]["params"])
        DCP.save({"a": L.ones(2), "n": 3}, checkpoint_id=folder)
        got = {"a": L.zeros(2), "n": 0}
        DCP.load(got, checkpoint_id=folder)
        out.append((got["a"].tolist(), got["n"]))
        out.append(outcome(lambda: DCP.load({"b": L.zeros(2)}, checkpoint_id=folder)))
        out.append(outcome(lambda: DCP.load({"a": L.zeros(3)}, checkpoint_id=folder)))
        out.append(outcome(lambda: DCP.save({"a": L.ones(1)})))
    finally:
        d.destroy_process_group()
    return out


def test_sharded_single_process_matches_torch(tmp_path):
    import glasstorch
    mine = scenario(glasstorch, str(tmp_path / "g"))
    theirs = scenario(torch, str(tmp_path / "t"))
    assert [str(v) for v in mine] == [str(v) for v in theirs]
