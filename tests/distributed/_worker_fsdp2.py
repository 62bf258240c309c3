"""Run on every rank by tests/distributed/test_fsdp2.py, under glasstorch (mpiexec) or torch
(gloo): functional collectives, fully_shard (FSDP2) training against one process on the
whole batch, and distributed checkpoints of a fully_shard model (saved on this world size,
loaded back here and by ``reload`` in one process, without a group). Prints
``RESULT <rank> <scenario> <repr>`` lines as _worker_shard.py does. ``argv[1]`` is the
library, ``argv[2]`` the scenarios."""

import datetime
import importlib
import os
import sys
import warnings

from _worker_shard import batches, max_diff, mlp, train  # this folder, on sys.path

warnings.simplefilter("ignore")        # torch's deprecation notices


def funcol(L, dist, r, n):
    f = importlib.import_module(f"{L.__name__}.distributed._functional_collectives")
    W = dist.group.WORLD
    x = (L.arange(6.).reshape(2, 3) + 10 * r).requires_grad_()
    w = L.arange(1., 7.).reshape(2, 3)
    out = []
    for name, fn in [("all_reduce", lambda: f.all_reduce(x, "sum", W)),
                     ("all_reduce max", lambda: f.all_reduce(x, "max", W)),
                     ("all_gather dim 1", lambda: f.all_gather_tensor(x, 1, W)),
                     ("all_gather dim 0", lambda: f.all_gather_tensor_autograd(x, 0, W)),
                     ("reduce_scatter", lambda: f.reduce_scatter_tensor(x.repeat(n, 1), "sum",
                                                                        0, W)),
                     ("reduce_scatter dim 1", lambda: f.reduce_scatter_tensor_autograd(
                         x.repeat(1, n), "sum", 1, W)),
                     ("all_to_all", lambda: f.all_to_all_single_autograd(
                         x.repeat(n, 1), None, None, W))]:
        y = f.wait_tensor(fn())
        try:
            g = L.autograd.grad((y * L.arange(1., y.numel() + 1).reshape(y.shape)).sum(),
                                x)[0].tolist()
        except RuntimeError as e:
            g = str(e)
        out.append((name, y.tolist(), g))
    out.append(("permute", f.permute_tensor(L.arange(3.) + r, [(i + 1) % n for i in range(n)],
                                            W).tolist()))
    out.append(("broadcast", f.broadcast(x.detach() * 0 + r, 0, W).tolist()))
    out.append(("coalesced", [t.tolist() for t in f.all_reduce_coalesced([w, w * r], "sum",
                                                                         W)]))
    del w
    return out


def _full(model):
    # whole: torch's ops on an empty shard (3 rows over 4 ranks) would refuse to reduce
    return [p.full_tensor() for p in model.parameters()]


def _sharded_mlp(L, F, seed, **kwargs):
    m = mlp(L, seed)
    F.fully_shard(m[0], **kwargs)
    F.fully_shard(m[2], **kwargs)
    F.fully_shard(m, **kwargs)
    return m


def fully_shard(L, dist, r, n):
    """3 steps of Adam on this rank's quarter of the batch against one process on all of
    it, for both reshard_after_forward settings; then gradient accumulation without sync."""
    F = importlib.import_module(f"{L.__name__}.distributed.fsdp")
    data = batches(L, n)
    mine = [(x[4 * r:4 * r + 4], y[4 * r:4 * r + 4]) for x, y in data]
    ref = mlp(L, 0)
    ref_opt = L.optim.Adam(ref.parameters(), lr=0.05)
    train(L, ref, ref_opt, data)
    out = []
    for reshard in (True, False):
        m = _sharded_mlp(L, F, 0, reshard_after_forward=reshard)
        opt = L.optim.Adam(m.parameters(), lr=0.05)
        train(L, m, opt, mine)
        full = _full(m)
        out.append(("trained", reshard, type(m).__name__, type(m[0]).__name__,
                    isinstance(m[2], F.FSDPModule),
                    [(k, tuple(p.to_local().shape), p.placements) for k, p in
                     m.named_parameters()],
                    max_diff(full, ref.parameters()) < 1e-5))
    # HSDP: replicated along the mesh's first dimension, sharded along its second
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    m = _sharded_mlp(L, F, 0, mesh=T.init_device_mesh(
        "cpu", (2, n // 2), mesh_dim_names=("replicate", "shard")))
    opt = L.optim.Adam(m.parameters(), lr=0.05)
    train(L, m, opt, mine)
    out.append(("hsdp", [(k, tuple(p.to_local().shape), p.placements) for k, p in
                         m.named_parameters()],
                max_diff(_full(m), ref.parameters()) < 1e-5))
    # no gradient sync on the first half-batch, sync on the second: one process's gradient
    m = _sharded_mlp(L, F, 0)
    x, y = data[0]
    half = [(x[4 * r:4 * r + 2], y[4 * r:4 * r + 2]), (x[4 * r + 2:4 * r + 4],
                                                       y[4 * r + 2:4 * r + 4])]
    m.set_requires_gradient_sync(False)
    L.nn.functional.mse_loss(m(half[0][0]), half[0][1]).backward()
    none_yet = all(p.grad is None for p in m.parameters())
    m.set_requires_gradient_sync(True)
    L.nn.functional.mse_loss(m(half[1][0]), half[1][1]).backward()
    ref = mlp(L, 0)
    for part in (0, 1):
        xs = L.cat([x[4 * k + 2 * part:4 * k + 2 * part + 2] for k in range(n)])
        ys = L.cat([y[4 * k + 2 * part:4 * k + 2 * part + 2] for k in range(n)])
        L.nn.functional.mse_loss(ref(xs), ys).backward()
    got = [p.grad.full_tensor() for p in m.parameters()]
    out.append(("no sync then sync", none_yet, max_diff(got, [p.grad for p in
                                                              ref.parameters()]) < 1e-6))
    DTensor = importlib.import_module(f"{L.__name__}.distributed.tensor").DTensor
    m[0].unshard()
    out.append(("unshard", isinstance(m[0].weight, DTensor), tuple(m[0].weight.shape),
                max_diff([m[0].weight], [ref[0].weight]) == 0))
    m[0].reshard()
    out.append(("reshard", isinstance(m[0].weight, DTensor)))
    return out


def dcp2(L, dist, r, n):
    """A fully_shard model and its Adam state through get_state_dict -> dcp.save -> dcp.load
    -> set_state_dict into a fresh model, then one more step on both."""
    F = importlib.import_module(f"{L.__name__}.distributed.fsdp")
    DCP = importlib.import_module(f"{L.__name__}.distributed.checkpoint")
    SD = importlib.import_module(f"{L.__name__}.distributed.checkpoint.state_dict")
    folder = os.path.join(os.environ["GT_SCRATCH"], L.__name__, "fsdp2")
    data = batches(L, n)
    mine = [(x[4 * r:4 * r + 4], y[4 * r:4 * r + 4]) for x, y in data]
    m = _sharded_mlp(L, F, 0)
    opt = L.optim.Adam(m.parameters(), lr=0.05)
    train(L, m, opt, mine[:2])
    msd, osd = SD.get_state_dict(m, opt)
    out = [(list(msd), type(msd["0.weight"]).__name__, sorted(osd["state"]),
            type(osd["state"]["0.weight"]["exp_avg"]).__name__,
            osd["param_groups"][0]["params"])]
    DCP.save({"model": msd, "optim": osd}, checkpoint_id=folder)
    full = SD.get_model_state_dict(m, options=SD.StateDictOptions(full_state_dict=True))
    out.append(("full", [(k, tuple(v.shape), type(v).__name__) for k, v in full.items()]))
    if r == 0:
        L.save(full, os.path.join(folder + "_saved.pt"))
    m2 = _sharded_mlp(L, F, 5)
    opt2 = L.optim.Adam(m2.parameters(), lr=0.05)
    train(L, m2, opt2, mine[2:])
    msd2, osd2 = SD.get_state_dict(m2, opt2)
    state = {"model": msd2, "optim": osd2}
    DCP.load(state, checkpoint_id=folder)
    SD.set_state_dict(m2, opt2, model_state_dict=state["model"],
                      optim_state_dict=state["optim"])
    same = max_diff(_full(m2), _full(m)) == 0
    train(L, m, opt, mine[2:])
    train(L, m2, opt2, mine[2:])
    out.append(("restored", same, max_diff(_full(m2), _full(m)) < 1e-7))
    return out


def reload(L, scratch):
    """One process (no process group): the checkpoint saved on n ranks, loaded whole."""
    DCP = importlib.import_module(f"{L.__name__}.distributed.checkpoint")
    folder = os.path.join(scratch, L.__name__, "fsdp2")
    m = mlp(L, 7)
    target = {"model": m.state_dict()}
    DCP.load(target, checkpoint_id=folder)
    m.load_state_dict(target["model"])
    want = L.load(folder + "_saved.pt")
    return [(k, tuple(v.shape), (v - want[k]).abs().max().item() == 0)
            for k, v in m.state_dict().items()]


def main():
    lib, scenario = sys.argv[1], sys.argv[2]
    if scenario == "reload":         # argv[1]: library=scratch folder, comma-separated
        for job in lib.split(","):
            name, scratch = job.split("=")
            print(f"RESULT reload {name} {reload(importlib.import_module(name), scratch)!r}",
                  flush=True)
        return
    if lib == "torch":
        import torch as L
    else:
        import glasstorch as L
    dist = L.distributed
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    r, n = dist.get_rank(), dist.get_world_size()
    scenarios = {"funcol": funcol, "fully_shard": fully_shard, "dcp2": dcp2}
    lines = [f"{r} {name} {scenarios[name](L, dist, r, n)!r}" for name in scenario.split(",")]
    shared = os.environ.get("GT_DIST_RESULTS")  # ranks sharing one stdout: a file each
    if shared:
        with open(os.path.join(shared, f"rank{r}-{os.getpid()}"), "w") as f:
            f.write("\n".join(lines))
    else:
        print("\n".join(f"RESULT {line}" for line in lines), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
