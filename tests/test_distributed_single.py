"""torch.distributed / nn.parallel names behave like torch's on one CPU process."""

import socket

import pytest

import glasstorch

torch = pytest.importorskip("torch")


def free_port():
    # each library its own port: one's store must never answer the other's rendezvous
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenario(L):
    dist = L.distributed
    out = [dist.is_initialized()]
    with pytest.raises(ValueError):
        L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 3))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", world_size=1,
                            rank=0)
    try:
        out += [dist.get_rank(), dist.get_world_size(), dist.get_backend()]
        model = L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 3))
        out += [repr(model), list(model.state_dict().keys())]
        t = L.ones(2)
        dist.all_reduce(t)
        dist.barrier()
        out.append(t.tolist())
    finally:
        dist.destroy_process_group()
    out.append(dist.is_initialized())
    dp = L.nn.DataParallel(L.nn.Linear(2, 3))
    out += [repr(dp), list(dp.state_dict().keys()), tuple(dp(L.ones(4, 2)).shape)]
    with pytest.raises(RuntimeError):
        L.nn.parallel.data_parallel(L.nn.Linear(2, 2), L.ones(1, 2))
    return out


def test_single_process_group_and_wrappers_match_torch():
    assert scenario(glasstorch) == scenario(torch)


def test_is_available_is_false_until_hf_storage_and_strided_shard_exist():
    # transformers and peft import checkpoint.hf_storage and _StridedShard when this says True
    assert glasstorch.distributed.is_available() is False
