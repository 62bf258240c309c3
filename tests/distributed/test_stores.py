"""Stores and single-process rendezvous behave like torch's (run in this process)."""

import datetime
import itertools
import os

import pytest

import glasstorch
from tests._compare import outcome as _outcome

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed")

_ports = itertools.count(29811)


def outcome(fn):
    """The value of ``fn()``, or the name of the exception type it raises (the two
    libraries' exception classes are different objects)."""
    result = _outcome(fn)
    return result.__name__ if isinstance(result, type) else result
_short = datetime.timedelta(seconds=0.2)


def store_scenario(d, store, errors=True):
    store.set_timeout(_short)
    out = [store.set("a", "x"), store.get("a"), store.add("n", 2), store.add("n", 3),
           store.get("n"), store.compare_set("a", "x", "y"), store.get("a"),
           store.compare_set("a", "zz", "w"), store.compare_set("new", "", "v"),
           store.compare_set("new2", "q", "v"), store.delete_key("a"), store.delete_key("a"),
           store.check(["n"]), store.check(["zz"]), store.timeout]
    if errors:     # (after an error torch's TCPStore client is unusable: not compared)
        for call in (lambda: store.add("new", 1), lambda: store.get("missing"),
                     lambda: store.wait(["missing"], _short)):
            out.append(outcome(call))
    store.append("ap", "x")
    store.append("ap", b"y")
    store.multi_set(["k1", "k2"], ["1", "2"])
    out += [store.get("ap"), store.multi_get(["ap", "n"]), store.get("k2"),
            store.wait(["k1", "k2"])]
    return out


def test_hash_store_matches_torch():
    assert store_scenario(glasstorch.distributed, glasstorch.distributed.HashStore()) == \
        store_scenario(torch.distributed, torch.distributed.HashStore())


def test_file_store_matches_torch(tmp_path):
    mine = glasstorch.distributed.FileStore(str(tmp_path / "g"), 1)
    theirs = torch.distributed.FileStore(str(tmp_path / "t"), 1)
    assert store_scenario(glasstorch.distributed, mine) == \
        store_scenario(torch.distributed, theirs)
    # a second FileStore on the same file sees the first one's keys (as another process)
    again = glasstorch.distributed.FileStore(str(tmp_path / "g"), 1)
    assert again.get("k1") == b"1" and again.num_keys() == mine.num_keys()


def test_tcp_store_matches_torch():
    def run(d):
        master = d.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
        client = d.TCPStore("127.0.0.1", master.port, 1, False,
                            timeout=datetime.timedelta(seconds=5))
        out = [master.port > 0, master.host, master.timeout, master.num_keys()]
        client.set("shared", "1")
        out += [master.get("shared"), master.add("c", 1), client.add("c", 1), master.num_keys()]
        return out + store_scenario(d, client, errors=False)
    assert run(glasstorch.distributed) == run(torch.distributed)
    d = glasstorch.distributed
    master = d.TCPStore("127.0.0.1", 0, 1, True, timeout=_short)
    with pytest.raises(d.DistStoreError, match="timeout"):
        master.get("missing")
    with pytest.raises(d.DistStoreError):
        master.wait(["missing"], _short)
    assert master.get("init/") == b"1"     # still usable after a timeout


def test_tcp_store_client_without_server_fails_in_time():
    d = glasstorch.distributed
    with pytest.raises(d.DistNetworkError):
        d.TCPStore("127.0.0.1", next(_ports), 2, False, timeout=datetime.timedelta(seconds=0.3))


def rendezvous_scenario(L, tmp_path):
    d = L.distributed
    out = []
    for kwargs in ({"backend": "nccl", "init_method": f"tcp://127.0.0.1:{next(_ports)}",
                    "world_size": 1, "rank": 0},
                   {"backend": "gloo", "init_method": "env://"},
                   {"backend": "gloo", "init_method": "env://", "world_size": 1, "rank": 0},
                   {"backend": "gloo", "init_method": "bogus://x"},
                   {"backend": "gloo", "timeout": 5, "world_size": 1, "rank": 0,
                    "init_method": f"file://{tmp_path}/x"}):
        out.append(outcome(lambda: d.init_process_group(**kwargs)))
        out.append(d.is_initialized())
    for kwargs in ({"init_method": f"file://{tmp_path}/f", "world_size": 1, "rank": 0},
                   {"init_method": f"tcp://127.0.0.1:{next(_ports)}?rank=0&world_size=1"},
                   {"store": d.HashStore(), "world_size": 1, "rank": 0}):
        d.init_process_group("gloo", **kwargs)
        t = L.ones(2)
        d.all_reduce(t, op=d.ReduceOp.AVG)
        out += [d.get_rank(), d.get_world_size(), d.get_backend(), t.tolist(),
                outcome(lambda: d.init_process_group("gloo", store=d.HashStore(),
                                                     world_size=1, rank=0))]
        d.destroy_process_group()
    out.append(outcome(lambda: d.all_reduce(L.ones(1))))
    out.append(outcome(lambda: d.get_rank()))
    return out


def test_rendezvous_and_errors_match_torch(tmp_path, monkeypatch):
    for key in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "t").mkdir()
    (tmp_path / "g").mkdir()
    mine = rendezvous_scenario(glasstorch, tmp_path / "g")
    theirs = rendezvous_scenario(torch, tmp_path / "t")
    assert mine == theirs


def test_many_ranks_without_mpi4py_say_how_to_install(monkeypatch):
    import sys

    from glasstorch.distributed import _mpi
    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"glasstorch\[distributed\]"):
        _mpi.load()


def test_ranks_outside_a_process_manager_are_refused(monkeypatch):
    from glasstorch.distributed import _mpi
    for key in ("PMI_RANK", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(RuntimeError, match="glasstorch.distributed.run"):
        _mpi.connect_world(glasstorch.distributed.HashStore(), 0, 2, 1.0)
    assert os.environ.get("PMI_RANK") is None
