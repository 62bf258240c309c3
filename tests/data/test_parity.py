"""Samplers, datasets, collation and DataLoader batch order compared with torch."""

import collections
import math

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import glasstorch
import glasstorch.utils.data as gdata

from .common import T, convert, norm, outcome, same

DATA = {torch: tdata, glasstorch: gdata}
Point = collections.namedtuple("Point", "x y")


# ------------------------------------------------------------------ samplers
@pytest.mark.parametrize("n", [0, 1, 7, 10])
@pytest.mark.parametrize("bs,drop", [(1, False), (3, False), (3, True), (10, True), (11, False)])
def test_sequential_and_batch_sampler(n, bs, drop):
    def run(lib):
        d = DATA[lib]
        s = d.BatchSampler(d.SequentialSampler(range(n)), bs, drop)
        return list(s), len(s), list(d.SequentialSampler(range(n)))
    same(run)


@pytest.mark.parametrize("args", [(0, False), (-1, False), (True, False), (2.0, False),
                                  (2, None), (2, 1)])
def test_batch_sampler_errors(args):
    same(lambda lib: DATA[lib].BatchSampler(range(5), *args))


@pytest.mark.parametrize("n,reps,drop", [(10, 3, False), (10, 3, True), (2, 4, False),
                                         (9, 3, False), (9, 3, True), (1, 3, True),
                                         (5, 1, False), (0, 2, False)])
def test_distributed_sampler_unshuffled(n, reps, drop):
    def run(lib):
        out = []
        for r in range(reps):
            s = DATA[lib].DistributedSampler(range(n), reps, r, shuffle=False, drop_last=drop)
            out.append((list(s), len(s)))
        return out
    same(run)


def test_distributed_sampler_errors():
    same(lambda lib: DATA[lib].DistributedSampler(range(4), 2, 2))
    same(lambda lib: DATA[lib].DistributedSampler(range(4), 2, -1))
    same(lambda lib: DATA[lib].DistributedSampler(range(4)))


def test_distributed_sampler_shuffle():
    def shards(epoch, seed=0):
        out = []
        for r in range(3):
            s = gdata.DistributedSampler(range(10), 3, r, shuffle=True, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    a = shards(0)
    assert a == shards(0)                        # reproducible
    assert a != shards(1) and a != shards(0, seed=5)
    flat = sum(a, [])
    assert len(flat) == 12 and set(flat) == set(range(10))  # padded by 2, covers all
    assert all(len(s) == 4 for s in a)
    assert len(set(a[0]) & set(a[1])) <= 2       # shards only overlap through padding


def test_random_sampler():
    g = glasstorch.Generator().manual_seed(3)
    s = gdata.RandomSampler(range(20), generator=g)
    a = list(s)
    assert sorted(a) == list(range(20)) and len(s) == 20
    b = list(s)
    assert sorted(b) == list(range(20)) and a != b   # the generator moves on
    g.manual_seed(3)
    assert list(s) == a                              # reproducible
    s = gdata.RandomSampler(range(5), num_samples=12, generator=g)
    r = list(s)
    assert len(r) == 12 == len(s) and all(r.count(i) >= 2 for i in range(5))
    s = gdata.RandomSampler(range(5), replacement=True, num_samples=70, generator=g)
    r = list(s)
    assert len(r) == 70 and set(r) == set(range(5))
    glasstorch.manual_seed(1)
    a = list(gdata.RandomSampler(range(30)))
    glasstorch.manual_seed(1)
    assert list(gdata.RandomSampler(range(30))) == a   # global seed drives it


@pytest.mark.parametrize("kw", [dict(replacement=1), dict(num_samples=0),
                                dict(num_samples=2.5), dict(num_samples=-3)])
def test_random_sampler_errors(kw):
    same(lambda lib: DATA[lib].RandomSampler(range(4), **kw))


def test_subset_and_weighted_samplers():
    g = glasstorch.Generator().manual_seed(0)
    s = gdata.SubsetRandomSampler([5, 7, 9, 11], generator=g)
    assert sorted(s) == [5, 7, 9, 11] and len(s) == 4
    s = gdata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=g)
    r = list(s)
    assert len(r) == 50 == len(s) and set(r) <= {1, 3} and r.count(3) > r.count(1)
    r = list(gdata.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g))
    assert sorted(r) == [0, 1, 2]
    for args in ([[1.0, 2.0], 0], [[1.0, 2.0], 2, 1], [[[1.0, 2.0]], 2], [[1.0], True]):
        same(lambda lib, args=args: DATA[lib].WeightedRandomSampler(*args))


# ------------------------------------------------------------------ datasets
def test_datasets():
    def run(lib):
        d = DATA[lib]
        a = lib.arange(12).reshape(6, 2)
        b = lib.arange(6) * 0.5
        td = d.TensorDataset(a, b)
        cd = d.ConcatDataset([td, d.TensorDataset(a[:2], b[:2])])
        sd = d.StackDataset(td, list(range(6)))
        kd = d.StackDataset(x=td, y=range(6))
        sub = d.Subset(td, [4, 0, 2])
        return (len(td), td[3], len(cd), cd[7], cd[-1], cd[-8], cd.cumulative_sizes,
                len(sd), sd[2], sd.__getitems__([1, 3]), kd[1], kd.__getitems__([0]),
                len(sub), sub[1], sub.__getitems__([0, 2]), (td + td)[7], len(td + td))
    same(run)


@pytest.mark.parametrize("case", ["tensor_mismatch", "concat_empty", "concat_neg",
                                  "stack_both", "stack_len", "stack_none", "base_getitem"])
def test_dataset_errors(case):
    def run(lib):
        d = DATA[lib]
        if case == "tensor_mismatch":
            return d.TensorDataset(lib.zeros(2), lib.zeros(3))
        if case == "concat_empty":
            return d.ConcatDataset([])
        if case == "concat_neg":
            return d.ConcatDataset([range(3)])[-4]
        if case == "stack_both":
            return d.StackDataset(range(2), x=range(2))
        if case == "stack_len":
            return d.StackDataset(range(2), range(3))
        if case == "stack_none":
            return d.StackDataset()
        return d.Dataset()[0]
    same(run)


class Stream(tdata.IterableDataset):  # overridden per library below
    pass


def make_stream(lib, n, shard=False):
    d = DATA[lib]

    class S(d.IterableDataset):
        def __iter__(self):
            info = d.get_worker_info()
            if shard and info is not None:
                return iter(range(info.id, n, info.num_workers))
            return iter(range(n))

        def __len__(self):
            return n
    return S()


def test_chain_dataset():
    def run(lib):
        c = make_stream(lib, 3) + make_stream(lib, 2)
        return list(c), len(c), type(c).__name__
    same(run)
    with pytest.raises(AssertionError):
        list(gdata.ChainDataset([range(3)]))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [0.33, 0.33, 0.34],
                                     [0.1, 0.1, 0.1, 0.7], [4, 4], [0.6, 0.6]])
def test_random_split(lengths):
    def run(lib):
        parts = DATA[lib].random_split(range(10), lengths,
                                       generator=lib.Generator().manual_seed(0))
        return [len(p) for p in parts]
    same(run)
    if math.isclose(sum(lengths), 1) or sum(lengths) == 10:
        g = glasstorch.Generator().manual_seed(0)
        parts = gdata.random_split(range(10), lengths, generator=g)
        got = sorted(i for p in parts for i in p)
        assert got == list(range(10))
        g.manual_seed(0)
        again = gdata.random_split(range(10), lengths, generator=g)
        assert [list(p) for p in parts] == [list(p) for p in again]


# ------------------------------------------------------------------ collate
COLLATE_CASES = {
    "ints": [1, 2, 3],
    "floats": [1.0, 2.5],
    "bools": [True, False],
    "strings": ["a", "bc"],
    "bytes": [b"a", b"b"],
    "tensors": [T(np.arange(6, dtype=np.float32).reshape(2, 3)),
                T(np.ones((2, 3), np.float32))],
    "tensors0d": [T(np.int32(3)), T(np.int32(4))],
    "tensors_bf16": [T(np.ones(3, np.float32))],
    "tensor_mismatch": [T(np.zeros(2)), T(np.zeros(3))],
    "np_arrays": [np.arange(4, dtype=np.int16), np.arange(4, dtype=np.int16)],
    "np_f64": [np.ones((2, 2)), np.zeros((2, 2))],
    "np_scalars": [np.float32(1.5), np.float32(2)],
    "np_int_scalars": [np.int64(1), np.int64(2)],
    "np_bool_scalars": [np.bool_(True), np.bool_(False)],
    "np_str_array": [np.array(["a"]), np.array(["b"])],
    "dicts": [{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}],
    "ordered": [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
    "tuples": [(1, "a", 2.0), (2, "b", 3.0)],
    "lists": [[1, 2], [3, 4]],
    "ragged": [[1, 2], [3]],
    "namedtuples": [Point(1, T(np.zeros(2, np.float32))), Point(2, T(np.ones(2, np.float32)))],
    "nested": [{"img": T(np.zeros((1, 2), np.uint8)), "meta": {"id": 1, "name": "p"},
                "pts": [(1, 2.0)]},
               {"img": T(np.ones((1, 2), np.uint8)), "meta": {"id": 2, "name": "q"},
                "pts": [(3, 4.0)]}],
    "objects": [object(), object()],
    "none": [None, None],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate(case):
    batch = COLLATE_CASES[case]

    def run(lib):
        b = convert(batch, lib)
        if case == "tensors_bf16":
            b = [t.to(lib.bfloat16) for t in b] * 2
        return DATA[lib].default_collate(b)
    same(run)


@pytest.mark.parametrize("case", ["np_arrays", "np_scalars", "dicts", "tuples", "namedtuples",
                                  "strings", "np_str_array", "lists"])
def test_default_convert(case):
    batch = COLLATE_CASES[case]
    same(lambda lib: DATA[lib].default_convert(convert(batch, lib)))
    same(lambda lib: DATA[lib].default_convert(convert(tuple(batch), lib)))


# ------------------------------------------------------------------ DataLoader
class Squares:
    """A plain map-style dataset (no Dataset base, like many user datasets)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"i": i, "sq": np.array([i * i], dtype=np.float32), "name": f"s{i}"}

    def __len__(self):
        return self.n


LOADER_CASES = [
    dict(batch_size=4),
    dict(batch_size=4, drop_last=True),
    dict(batch_size=1),
    dict(batch_size=None),
    dict(batch_size=20),
    dict(batch_sampler=[[3, 1], [0], [9, 8, 7]]),
    dict(sampler=[5, 3, 1], batch_size=2),
    dict(batch_size=3, collate_fn=lambda b: [x["i"] for x in b]),
]


@pytest.mark.parametrize("kw", LOADER_CASES)
@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_order(kw, workers):
    ds = Squares(10)
    ref = [norm(b) for b in tdata.DataLoader(ds, **kw)]
    loader = gdata.DataLoader(ds, num_workers=workers, **kw)
    assert [norm(b) for b in loader] == ref
    assert len(loader) == len(tdata.DataLoader(ds, **kw))


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4, prefetch_factor=1)])
@pytest.mark.parametrize("shard", [False, True])
def test_iterable_dataset_workers(kw, shard):
    """Without sharding every worker yields the whole stream (like torch); with sharding via
    get_worker_info the stream is split."""
    def run(lib):
        loader = DATA[lib].DataLoader(make_stream(lib, 7, shard), num_workers=2, **kw)
        return [norm(b) for b in loader], len(loader)
    same(run)
    same(lambda lib: [norm(b) for b in DATA[lib].DataLoader(make_stream(lib, 7), **{
        k: v for k, v in kw.items() if k != "prefetch_factor"})])


@pytest.mark.parametrize("kw", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True), dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"),
    dict(num_workers=1, multiprocessing_context=3),
])
def test_dataloader_arg_errors(kw):
    same(lambda lib: DATA[lib].DataLoader(range(4), **kw))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[1]), dict(batch_sampler=[[1]])])
def test_iterable_dataset_arg_errors(kw):
    same(lambda lib: DATA[lib].DataLoader(make_stream(lib, 3), **kw))


def test_dataloader_setattr_and_len():
    def run(lib):
        loader = DATA[lib].DataLoader(range(10), batch_size=3)
        out = [len(loader)]
        for attr in ("batch_size", "sampler", "dataset", "drop_last"):
            out.append(outcome(setattr, loader, attr, None))
        loader.num_workers = 0   # allowed
        return out
    same(run)


def test_shuffle_reproducible():
    ds = list(range(25))
    glasstorch.manual_seed(0)
    loader = gdata.DataLoader(ds, batch_size=5, shuffle=True)
    e1 = [b.tolist() for b in loader]
    e2 = [b.tolist() for b in loader]
    assert sorted(sum(e1, [])) == ds and e1 != e2
    glasstorch.manual_seed(0)
    assert [b.tolist() for b in loader] == e1
    g = glasstorch.Generator().manual_seed(7)
    loader = gdata.DataLoader(ds, batch_size=5, shuffle=True, generator=g, num_workers=2)
    a = [b.tolist() for b in loader]
    g.manual_seed(7)
    assert [b.tolist() for b in loader] == a


def test_pin_memory_accepted():
    def run(lib):
        with pytest.warns(UserWarning, match="pin_memory"):
            return list(DATA[lib].DataLoader(range(3), batch_size=2, pin_memory=True))
    same(run)
