"""Run on every rank by tests/distributed/test_multiprocess.py, under glasstorch (started by
mpiexec or glasstorch.distributed.run) or under torch (gloo, plain processes): exercises the
collectives and DDP, then prints ``RESULT <repr>`` so that the test can compare the two
libraries line by line. ``argv[1]`` is the library, ``argv[2]`` the scenario."""

import datetime
import os
import sys
import warnings

warnings.simplefilter("ignore", FutureWarning)    # distributed.nn's deprecation notices


def collectives(L, dist, r, n):
    out = []
    for name in ["float32", "float64", "int64", "int32", "bfloat16", "float16", "uint8", "int8",
                 "complex64"]:
        dt = getattr(L, name)
        t = (L.arange(4) + r + 1).to(dt)
        dist.all_reduce(t)
        out.append((name, t.tolist()))
    b = L.tensor([r == 0, True, False, r == 1])
    dist.all_reduce(b, op=dist.ReduceOp.MAX)
    out.append(b.tolist())
    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
        t = L.tensor([1.0, 2.0]) * (r + 1)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out.append((op, t.tolist()))
    for op in ["BAND", "BOR", "BXOR"]:
        t = L.tensor([6, 3]) + r
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out.append((op, t.tolist()))
    t = L.arange(12.).reshape(3, 4).t() * (r + 1)      # non-contiguous, stays so
    dist.all_reduce(t)
    out.append((t.tolist(), t.stride()))
    t = L.full((3,), float(r))
    dist.broadcast(t, 1)
    out.append(t.tolist())
    lst = [L.zeros(2) for _ in range(n)]
    dist.all_gather(lst, L.ones(2) * r)
    out.append([x.tolist() for x in lst])
    o = L.zeros(n * 2)
    dist.all_gather_into_tensor(o, L.ones(2) * r)
    out.append(o.tolist())
    t = L.ones(2) * (r + 1)
    dist.reduce(t, 0)
    out.append(t.tolist() if r == 0 else None)   # gloo leaves partial sums elsewhere
    g = [L.zeros(2) for _ in range(n)] if r == 0 else None
    dist.gather(L.ones(2) * r, g, 0)
    out.append(None if g is None else [x.tolist() for x in g])
    s = L.zeros(2)
    dist.scatter(s, [L.ones(2) * i for i in range(n)] if r == 0 else None, 0)
    out.append(s.tolist())
    o = L.zeros(2)
    dist.reduce_scatter(o, [L.ones(2) * (i + r) for i in range(n)])
    out.append(o.tolist())
    o = L.zeros(2)
    dist.reduce_scatter_tensor(o, L.arange(2. * n) + r)
    out.append(o.tolist())
    outs = [L.zeros(1) for _ in range(n)]
    dist.all_to_all(outs, [L.tensor([10. * r + i]) for i in range(n)])
    out.append([x.tolist() for x in outs])
    o = L.zeros(n)
    dist.all_to_all_single(o, L.arange(float(n)) + 10 * r)
    out.append(o.tolist())
    w = dist.all_reduce(L.ones(3), async_op=True)
    w.wait()
    out.append((w.is_completed(), w.get_future().wait()[0].tolist()))
    fut = dist.all_reduce(L.ones(2), async_op=True).get_future().then(
        lambda f: f.value()[0] * 2)
    out.append(fut.wait().tolist())
    if r == 0:
        dist.send(L.tensor([5., 6.]), 1)
        t = L.zeros(1)
        out.append((dist.recv(t, 1), t.tolist()))
    elif r == 1:
        t = L.zeros(2)
        out.append((dist.recv(t, 0), t.tolist()))
        dist.send(L.tensor([7.]), 0)
    rb = L.zeros(1)
    ops = [dist.P2POp(dist.isend, L.ones(1) * r, (r + 1) % n),
           dist.P2POp(dist.irecv, rb, (r - 1) % n)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    out.append(rb.tolist())
    objs = [None] * n
    dist.all_gather_object(objs, {"r": r})
    out.append(objs)
    bl = [r, "x"]
    dist.broadcast_object_list(bl, 1)
    out.append(bl)
    go = [None] * n if r == 0 else None
    dist.gather_object(r * 3, go, 0)
    out.append(go)
    so = [None]
    dist.scatter_object_list(so, [chr(97 + i) for i in range(n)] if r == 0 else None, 0)
    out.append(so)
    import importlib
    F = importlib.import_module(f"{L.__name__}.distributed.nn.functional")
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = F.all_reduce(x * (r + 1))
    (y * (r + 1)).sum().backward()
    out.append((y.tolist(), x.grad.tolist()))
    x = L.tensor([1.0, 2.0], requires_grad=True)
    parts = F.all_gather(x * (r + 1))
    sum(p.sum() * (i + 1) for i, p in enumerate(parts)).backward()
    out.append(([p.tolist() for p in parts], x.grad.tolist()))
    dist.barrier()
    dist.monitored_barrier()
    sub = dist.new_group([1])
    member = sub != dist.GroupMember.NON_GROUP_MEMBER
    out.append((member, dist.get_rank(sub), dist.get_world_size(sub)))
    if member:
        t = L.ones(1) * 3
        dist.all_reduce(t, group=sub)
        out.append((t.tolist(), dist.get_process_group_ranks(sub)))
    return out


def ddp(L, dist, r, n):
    """3 SGD steps of an MLP with DDP on this rank's quarter of each batch, against one
    process on the whole batch: the parameters must agree."""
    from_dp = L.nn.parallel.DistributedDataParallel

    def model(seed):
        L.manual_seed(seed)
        return L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 2))
    g = L.Generator().manual_seed(123)
    batches = [(L.randn(4 * n, 4, generator=g), L.randn(4 * n, 2, generator=g))
               for _ in range(3)]

    def train(m, data):
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        for x, y in data:
            opt.zero_grad()
            L.nn.functional.mse_loss(m(x), y).backward()
            opt.step()
    out = []
    for kwargs in ({"bucket_cap_mb": 25}, {"bucket_cap_mb": 0.0001},
                   {"gradient_as_bucket_view": True, "find_unused_parameters": True}):
        wrapped = from_dp(model(seed=r), **kwargs)     # rank 0's weights are broadcast
        train(wrapped, [(x[4 * r:4 * r + 4], y[4 * r:4 * r + 4]) for x, y in batches])
        ref = model(seed=0)
        train(ref, batches)
        diff = max((a - b).abs().max().item() for a, b in
                   zip(wrapped.module.parameters(), ref.parameters()))
        out.append(diff < 1e-5)
    out.append(list(wrapped.state_dict())[:2])
    x = batches[0][0][4 * r:4 * r + 4]
    with wrapped.no_sync():
        wrapped(x).sum().backward()
    local = next(wrapped.parameters()).grad.clone()
    gathered = [L.zeros_like(local) for _ in range(n)]
    dist.all_gather(gathered, local)
    out.append(("no_sync keeps local grads", not L.equal(gathered[0], gathered[1])))
    return out


def ddp_extra(L, dist, r, n):
    """Unused parameters, buffer broadcast, the fp16 hook and uneven inputs with join():
    rounded parameters and facts, compared with torch's DDP."""
    DDP = L.nn.parallel.DistributedDataParallel

    class Branchy(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = L.nn.Linear(3, 2), L.nn.Linear(3, 2)

        def forward(self, x, use_b):
            return self.b(x) if use_b else self.a(x)
    out = []
    L.manual_seed(r)
    m = DDP(Branchy(), find_unused_parameters=True)
    g = L.Generator().manual_seed(7 + r)
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    for step in range(2):
        opt.zero_grad()
        # rank 0 never uses b in step 0: b's gradient is rank 1's alone, averaged over 2
        m(L.randn(2, 3, generator=g), use_b=(step == 1 or r == 1)).sum().backward()
        opt.step()
        out.append([None if p.grad is None else round(p.grad.sum().item(), 4)
                    for p in m.parameters()])
    out.append([round(p.sum().item(), 4) for p in m.parameters()])
    L.manual_seed(r)
    bn = DDP(L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4)))
    for _ in range(2):
        bn(L.randn(4, 3, generator=g) * (r + 1)).sum().backward()
    out.append([round(v, 4) for v in bn.module[1].running_mean.tolist()])
    import importlib
    from_hooks = importlib.import_module(
        f"{L.__name__}.distributed.algorithms.ddp_comm_hooks.default_hooks")
    L.manual_seed(r)
    h = DDP(L.nn.Linear(3, 2))
    h.register_comm_hook(None, from_hooks.fp16_compress_hook)
    h(L.randn(4, 3, generator=g)).sum().backward()
    out.append([round(p.grad.sum().item(), 2) for p in h.parameters()])
    L.manual_seed(0)
    j = DDP(L.nn.Linear(3, 1))
    opt = L.optim.SGD(j.parameters(), lr=0.1)
    with j.join():
        for _ in range(3 if r == 0 else 2):
            opt.zero_grad()
            j(L.randn(2, 3, generator=g)).sum().backward()
            opt.step()
    out.append([round(p.sum().item(), 4) for p in j.parameters()])
    return out


def fail(L, dist, r, n):
    """Rank 1 dies before the collective: the others must not hang."""
    if r == 1:
        raise SystemExit(3)
    out = []
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1))
        out.append("no error")
    except RuntimeError as e:
        out.append(f"{type(e).__name__}: {e}")
    try:
        dist.all_reduce(L.ones(1))
        out.append("no error")
    except RuntimeError as e:
        out.append(type(e).__name__)
    return out


def main():
    lib, scenario = sys.argv[1], sys.argv[2]
    if lib == "torch":
        import torch as L
    else:
        import glasstorch as L
    dist = L.distributed
    timeout = datetime.timedelta(seconds=float(sys.argv[3]) if len(sys.argv) > 3 else 300)
    dist.init_process_group("gloo", timeout=timeout)
    r, n = dist.get_rank(), dist.get_world_size()
    scenarios = {"collectives": collectives, "ddp": ddp, "fail": fail,
                 "ddp_extra": ddp_extra,
                 "all": lambda *a: collectives(*a) + ddp(*a) + ddp_extra(*a)}
    out = scenarios[scenario](L, dist, r, n)
    shared = os.environ.get("GT_DIST_RESULTS")  # ranks sharing one stdout: a file each
    if shared:
        with open(os.path.join(shared, f"rank{r}-{os.getpid()}"), "w") as f:
            f.write(f"{r} {out!r}")
    else:
        print(f"RESULT {r} {out!r}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
