"""Run on every rank by tests/distributed/test_sharded.py, under glasstorch (mpiexec) or
torch (gloo): ZeroRedundancyOptimizer, DeviceMesh/DTensor, FSDP and distributed checkpoint,
each checked against the unsharded computation on one process, then printed as
``RESULT <rank> <scenario> <repr>`` so that the test can compare the two libraries line by
line.
``argv[1]`` is the library, ``argv[2]`` the scenario (``argv[3]``: a scratch folder)."""

import copy
import datetime
import importlib
import os
import sys
import warnings

warnings.simplefilter("ignore")        # torch's FSDP/DTensor notices


def mlp(L, seed):
    L.manual_seed(seed)
    return L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 3))


def batches(L, n, steps=3):
    g = L.Generator().manual_seed(123)
    return [(L.randn(4 * n, 4, generator=g), L.randn(4 * n, 3, generator=g))
            for _ in range(steps)]


def train(L, model, opt, data):
    for x, y in data:
        opt.zero_grad()
        L.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def max_diff(xs, ys):
    return max((a.detach() - b.detach()).abs().max().item() for a, b in zip(xs, ys))


def zero(L, dist, r, n):
    Z = importlib.import_module(f"{L.__name__}.distributed.optim").ZeroRedundancyOptimizer
    DDP = L.nn.parallel.DistributedDataParallel
    data = batches(L, n)
    mine = [(x[4 * r:4 * r + 4], y[4 * r:4 * r + 4]) for x, y in data]
    out = []
    ref = mlp(L, 0)
    ref_opt = L.optim.Adam(ref.parameters(), lr=0.05)
    train(L, ref, ref_opt, data)
    for view in (False, True):
        m = DDP(mlp(L, r))                       # rank 0's weights are broadcast
        o = Z(m.parameters(), L.optim.Adam, parameters_as_bucket_view=view, lr=0.05)
        train(L, m, o, mine)
        out.append(("same as one process", view, max_diff(m.parameters(), ref.parameters())
                    < 1e-5))
    out.append([[tuple(p.shape) for g in o._partition_parameters()[k] for p in g["params"]]
                for k in range(n)])
    out.append(sorted(len(o.optim.state[p]) for p in o.optim.state))
    try:
        o.state_dict()
        out.append("no error")
    except RuntimeError as e:
        out.append(str(e))
    o.consolidate_state_dict(to=0)
    sd = [o.state_dict() if r == 0 else None]
    if r == 0:
        want = ref_opt.state_dict()
        out.append((sorted(sd[0]["state"]), sd[0]["param_groups"][0]["params"],
                    max(max_diff(sd[0]["state"][i].values(), want["state"][i].values())
                        for i in want["state"]) < 1e-5))
    dist.broadcast_object_list(sd, 0)
    m2 = DDP(mlp(L, 0))
    with L.no_grad():
        for a, b in zip(m2.parameters(), m.parameters()):
            a.copy_(b)
    o2 = Z(m2.parameters(), L.optim.Adam, lr=0.05)
    o2.load_state_dict(copy.deepcopy(sd[0]))   # torch would share the tensors of sd
    train(L, m, o, mine[:1])
    train(L, m2, o2, mine[:1])
    out.append(("resumed", max_diff(m.parameters(), m2.parameters()) < 1e-6))
    train(L, ref, ref_opt, data[:1])
    out.append(("resumed as one process", max_diff(m.parameters(), ref.parameters()) < 1e-5))
    return out


def dtensor(L, dist, r, n):
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    Shard, Replicate, Partial = T.Shard, T.Replicate, T.Partial
    out = []
    mesh = T.init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    out.append((mesh.shape, mesh.ndim, mesh.mesh.tolist(), mesh.get_coordinate(),
                mesh.get_local_rank(), mesh.mesh_dim_names, mesh["dp"].mesh.tolist(),
                dist.get_world_size(mesh.get_group()), mesh == mesh["dp"]))
    whole = L.arange(15.).reshape(5, 3)
    for p in (Shard(0), Shard(1), Replicate()):
        d = T.distribute_tensor(whole, mesh, [p])
        out.append((str(p), tuple(d.shape), d.stride(), d.to_local().tolist(), d.placements,
                    L.equal(d.full_tensor(), whole)))
    d = T.distribute_tensor(whole, mesh, [Shard(0)])
    for p in (Shard(1), Replicate(), Shard(0)):
        e = d.redistribute(mesh, [p])
        out.append(("redistribute", str(p), e.to_local().tolist(), L.equal(e.full_tensor(),
                                                                          whole)))
    part = T.DTensor.from_local(whole * (r + 1), mesh, [Partial()])
    out.append(("partial", tuple(part.shape), part.full_tensor().tolist(),
                part.redistribute(mesh, [Shard(1)]).to_local().tolist()))
    try:
        d.redistribute(mesh, [Partial()])
    except RuntimeError as err:
        out.append(str(err))
    local = L.ones(2, 3) * (r + 1)
    f = T.DTensor.from_local(local, mesh, [Shard(0)])
    out.append(("from_local", tuple(f.shape), f.full_tensor().tolist(),
                f.to_local() is local))
    # ops against the unsharded computation
    a = T.distribute_tensor(whole, mesh, [Shard(0)])
    b = T.distribute_tensor(L.arange(6.).reshape(3, 2) - 2, mesh, [Replicate()])
    c = T.distribute_tensor(L.arange(6.).reshape(3, 2) - 2, mesh, [Shard(0)])
    a1 = T.distribute_tensor(whole, mesh, [Shard(1)])
    for what, dt, ref in [
            ("pointwise", (a * 2 + 1).relu() - a, (whole * 2 + 1).relu() - whole),
            ("sum", a.sum(), whole.sum()), ("sum0", a.sum(0), whole.sum(0)),
            ("sum1", a.sum(1), whole.sum(1)), ("sum1 keepdim", a.sum(1, keepdim=True),
                                               whole.sum(1, keepdim=True)),
            ("mm S0 R", a @ b, whole @ b.full_tensor()),
            ("mm S1 S0", a1 @ c, whole @ c.full_tensor()),
            ("mm R S1", b.t() @ a1.t(), b.full_tensor().t() @ whole.t()),
            ("t", a.t(), whole.t()), ("mean", a.mean(), whole.mean()),
            ("softmax", a.softmax(-1), whole.softmax(-1))]:
        out.append((what, tuple(dt.shape), L.allclose(dt.full_tensor(), ref)))
        # torch's sharding propagation costs its choices: with a contraction dimension of
        # 3 on 4 ranks it replicates instead of reducing partial sums; both are right
        if what in ("pointwise", "sum", "sum0", "sum1", "sum1 keepdim", "mm S0 R", "t") \
                or (what.startswith("mm") and n == 2):
            out.append((what, dt.placements))
    e = a.clone()
    e.add_(1)
    out.append(("add_", e.placements, L.equal(e.full_tensor(), whole + 1)))
    try:
        a + whole
        out.append("no error")
    except RuntimeError as err:
        out.append(("mixed", "mixed torch.Tensor and DTensor" in str(err)))
    # gradients flow through the local parts
    x = whole.clone().requires_grad_()
    dx = T.distribute_tensor(x, mesh, [Shard(0)])
    (dx.full_tensor() * L.arange(3.)).sum().backward()
    out.append(("grad shard", dx.grad.placements, dx.grad.to_local().tolist()))
    w = T.distribute_tensor(L.ones(3, 2), mesh, [Replicate()])
    w.requires_grad_()
    (a @ w).sum().full_tensor().backward()
    out.append(("grad replicate", w.grad.full_tensor().tolist()))   # torch: Partial
    # a 2-D mesh
    mesh2 = T.init_device_mesh("cpu", (1, n), mesh_dim_names=("dp", "tp"))
    out.append((mesh2.shape, mesh2["tp"].mesh.tolist(), mesh2["dp"].mesh.tolist(),
                dist.get_world_size(mesh2.get_group("tp")),
                dist.get_world_size(mesh2.get_group(0))))
    try:
        mesh2.get_group()
    except RuntimeError as err:
        out.append("mesh_dim needs" in str(err).replace("\n", " ")
                   or "needs to be specified" in str(err))
    for ps in ([Replicate(), Shard(0)], [Shard(0), Shard(1)], [Shard(1), Replicate()]):
        d2 = T.distribute_tensor(whole, mesh2, ps)
        out.append((str(ps), d2.to_local().tolist(), L.equal(d2.full_tensor(), whole)))
    # a module
    lin = T.distribute_module(mlp(L, 0), mesh)
    y = lin(T.distribute_tensor(whole[:, :2].repeat(1, 2), mesh))
    out.append(("module", isinstance(lin[0].weight, T.DTensor),
                isinstance(lin[0].weight, L.nn.Parameter), lin[0].weight.placements,
                L.allclose(y.full_tensor(), mlp(L, 0)(whole[:, :2].repeat(1, 2)))))

    return out


def dtensor_train(L, dist, r, n):
    """Training with row-sharded Linear weights: the optimizers step each rank's part, and
    the result is one process's training. glasstorch only: torch's run of this same code
    ends 0.16 away from its own unsharded training (cause not investigated), so it is no
    oracle here."""
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    mesh = T.init_device_mesh("cpu", (n,))

    def rowwise(name, module, mesh):
        if isinstance(module, L.nn.Linear):
            module.weight = L.nn.Parameter(T.distribute_tensor(module.weight, mesh,
                                                               [T.Shard(0)]))
    out = []
    for Opt in (L.optim.SGD, L.optim.Adam):
        model, ref = T.distribute_module(mlp(L, 0), mesh, rowwise), mlp(L, 0)
        opts = [Opt(m.parameters(), lr=0.1) for m in (model, ref)]
        for x, t in batches(L, n, steps=2):
            for m, o, (xx, tt) in ((model, opts[0], (T.distribute_tensor(x, mesh),
                                                     T.distribute_tensor(t, mesh))),
                                   (ref, opts[1], (x, t))):
                o.zero_grad()
                L.nn.functional.mse_loss(m(xx), tt).backward()
                o.step()
        out.append(("trained", Opt.__name__, model[0].weight.placements,
                    tuple(model[0].weight.to_local().shape),
                    max_diff([p.full_tensor() for p in model.parameters()],
                             ref.parameters()) < 1e-6))
    return out


def fsdp(L, dist, r, n):
    """FullyShardedDataParallel against one process on the whole batch (torch's FSDP1
    needs an accelerator, so glasstorch alone runs this)."""
    import gc
    import weakref
    F = importlib.import_module(f"{L.__name__}.distributed.fsdp")
    FSDP, S = F.FullyShardedDataParallel, F.ShardingStrategy
    data = batches(L, n)
    mine = [(x[4 * r:4 * r + 4], y[4 * r:4 * r + 4]) for x, y in data]
    ref = mlp(L, 0)
    ref_opt = L.optim.Adam(ref.parameters(), lr=0.05)
    train(L, ref, ref_opt, data)
    want = ref.state_dict()
    out = []
    for strategy in (S.FULL_SHARD, S.SHARD_GRAD_OP, S.NO_SHARD):
        f = FSDP(mlp(L, r), sharding_strategy=strategy, sync_module_states=True)
        opt = L.optim.Adam(f.parameters(), lr=0.05)
        train(L, f, opt, mine)
        got = f.state_dict()
        out.append((strategy.name, f._flat_param.numel(), list(got),
                    max_diff(got.values(), want.values()) < 1e-5))
        seen = []
        f.module[0].register_forward_hook(
            lambda m, i, o: seen.append(weakref.ref(m.weight._base)))
        loss = f(mine[0][0]).sum()
        gc.collect()
        alive_after_forward = seen[0]() is not None
        loss.backward()
        gc.collect()
        out.append((strategy.name, "full params kept for backward", alive_after_forward,
                    "after", seen[0]() is not None))
    # no_sync, then clip_grad_norm_ and a step, against the same on one process
    f = FSDP(mlp(L, 0))
    ref = mlp(L, 0)
    opt, ref_opt = L.optim.SGD(f.parameters(), lr=0.1), L.optim.SGD(ref.parameters(), lr=0.1)
    (x0, y0), (x1, y1) = mine[:2]
    with f.no_sync():
        L.nn.functional.mse_loss(f(x0), y0).backward()
    out.append(("no_sync leaves no grad", f._flat_param.grad is None))
    L.nn.functional.mse_loss(f(x1), y1).backward()
    for x, y in data[:2]:
        L.nn.functional.mse_loss(ref(x), y).backward()
    norm = f.clip_grad_norm_(0.5)
    ref_norm = L.nn.utils.clip_grad_norm_(ref.parameters(), 0.5)
    out.append(("clip norm", abs(norm.item() - ref_norm.item()) < 1e-5))
    opt.step()
    ref_opt.step()
    out.append(("no_sync + clip + step", max_diff(f.state_dict().values(),
                                                  ref.state_dict().values()) < 1e-5))
    with FSDP.summon_full_params(f):
        names = [name for name, _ in f.named_parameters()][1:]
        same = max_diff([p for _, p in f.named_parameters()][1:], ref.parameters()) < 1e-6
        with L.no_grad():
            f.module[2].bias.add_(1)
    out.append(("summon_full_params", names, same,
                max_diff([f.state_dict()["2.bias"] - 1], [ref[2].bias]) < 1e-6))
    cfg = F.FullStateDictConfig(rank0_only=True)
    with FSDP.state_dict_type(f, F.StateDictType.FULL_STATE_DICT, cfg):
        out.append(("rank0_only", len(f.state_dict())))
    g = FSDP(mlp(L, 5))
    g.load_state_dict(ref.state_dict())
    out.append(("load_state_dict", max_diff(g.state_dict().values(),
                                            ref.state_dict().values()) == 0))
    return out


def dcp(L, dist, r, n):
    """Distributed checkpoint: a sharded DTensor saved and loaded into another sharding,
    and the FQN-keyed model/optimizer state of a DDP model through save/load."""
    T = importlib.import_module(f"{L.__name__}.distributed.tensor")
    DCP = importlib.import_module(f"{L.__name__}.distributed.checkpoint")
    SD = importlib.import_module(f"{L.__name__}.distributed.checkpoint.state_dict")
    folder = os.path.join(os.environ["GT_SCRATCH"], L.__name__)
    mesh = T.init_device_mesh("cpu", (n,))
    whole = L.arange(15.).reshape(5, 3)
    sd = {"model": {"w": T.distribute_tensor(whole, mesh, [T.Shard(0)]),
                    "b": L.arange(3.)}, "step": 7}
    DCP.save(sd, checkpoint_id=os.path.join(folder, "a"))
    out = []
    for p in (T.Shard(1), T.Replicate(), T.Shard(0)):
        target = {"model": {"w": T.distribute_tensor(L.zeros(5, 3), mesh, [p]),
                            "b": L.zeros(3)}, "step": 0}
        DCP.load(target, checkpoint_id=os.path.join(folder, "a"))
        out.append((str(p), target["model"]["w"].to_local().tolist(),
                    target["model"]["b"].tolist(), target["step"]))
    DDP = L.nn.parallel.DistributedDataParallel
    m = DDP(mlp(L, 0))
    opt = L.optim.Adam(m.parameters(), lr=0.05)
    train(L, m, opt, batches(L, n, steps=1))
    msd, osd = SD.get_state_dict(m, opt)
    out.append((list(msd), sorted(osd["state"]), osd["param_groups"][0]["params"],
                sorted(osd["state"]["0.weight"])))
    DCP.save({"model": msd, "optim": osd}, checkpoint_id=os.path.join(folder, "b"))
    m2 = DDP(mlp(L, 3))
    opt2 = L.optim.Adam(m2.parameters(), lr=0.05)
    train(L, m2, opt2, batches(L, n, steps=1))
    msd2, osd2 = SD.get_state_dict(m2, opt2)
    state = {"model": msd2, "optim": osd2}
    DCP.load(state, checkpoint_id=os.path.join(folder, "b"))
    SD.set_state_dict(m2, opt2, model_state_dict=state["model"],
                      optim_state_dict=state["optim"])
    out.append(("restored", max_diff(m2.parameters(), m.parameters()) == 0,
                max(max_diff(a.values(), b.values()) for a, b in
                    zip(opt2.state.values(), opt.state.values())) == 0))
    return out


def main():
    lib, scenario = sys.argv[1], sys.argv[2]
    if lib == "torch":
        import torch as L
    else:
        import glasstorch as L
    dist = L.distributed
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    r, n = dist.get_rank(), dist.get_world_size()
    scenarios = {"zero": zero, "dtensor": dtensor, "fsdp": fsdp, "dcp": dcp,
                 "dtensor_train": dtensor_train}
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
