"""DistributedDataParallel in one process (no MPI needed) against torch's, at world size 1."""

import importlib
import itertools

import pytest

import glasstorch
from tests._compare import outcome as _outcome

torch = pytest.importorskip("torch")

_ports = itertools.count(29931)


def outcome(fn):
    result = _outcome(fn)
    return result.__name__ if isinstance(result, type) else result


def scenario(L):
    d = L.distributed
    d.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{next(_ports)}", world_size=1,
                         rank=0)
    hooks = importlib.import_module(
        f"{L.__name__}.distributed.algorithms.ddp_comm_hooks.default_hooks")
    DDP = L.nn.parallel.DistributedDataParallel
    out = []
    try:
        frozen = L.nn.Linear(2, 2).requires_grad_(False)
        out.append(outcome(lambda: DDP(frozen)))
        for kwargs, hook in (({}, None), ({"gradient_as_bucket_view": True}, None),
                             ({"bucket_cap_mb": 0.0001}, hooks.fp16_compress_hook),
                             ({}, hooks.allreduce_hook)):
            L.manual_seed(0)
            model = DDP(L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2)),
                        **kwargs)
            if hook is not None:
                model.register_comm_hook(None, hook)
                out.append(outcome(lambda: model.register_comm_hook(None, hook)))
            opt = L.optim.SGD(model.parameters(), lr=0.1)
            g = L.Generator().manual_seed(1)
            for _ in range(2):
                opt.zero_grad()
                model(L.randn(5, 3, generator=g)).pow(2).sum().backward()
                opt.step()
            out.append([[round(v, 3) for v in p.reshape(-1).tolist()]
                        for p in model.parameters()])
            with model.no_sync():
                model(L.ones(1, 3)).sum().backward()
            out.append(round(model.module[0].weight.grad.sum().item(), 3))
        out.append(list(model.state_dict()))

        class TwoHeads(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = L.nn.Linear(2, 1), L.nn.Linear(2, 1)

            def forward(self, x):
                return self.a(x)
        m = DDP(TwoHeads())
        m(L.ones(1, 2)).sum().backward()
        out.append(outcome(lambda: m(L.ones(1, 2))))
        m = DDP(TwoHeads(), find_unused_parameters=True)
        for _ in range(2):
            m(L.ones(1, 2)).sum().backward()
        out.append([p.grad is None for p in m.parameters()])
    finally:
        d.destroy_process_group()
    return out


def test_ddp_at_world_size_one_matches_torch():
    assert scenario(glasstorch) == scenario(torch)
