"""glasstorch.utils._pytree against torch.utils._pytree: leaves, spec reprs, JSON dumps, key
paths, errors, registration."""

import copy
import dataclasses
import os
import pickle
import time
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum

import pytest

import glasstorch
import glasstorch.utils._pytree as gp

torch = pytest.importorskip("torch")
import torch.utils._pytree as tp  # noqa: E402

Point = namedtuple("Point", "x y")


class Color(Enum):
    RED = 1
    BLUE = 2


STRUCTURES = {
    "leaf": 1,
    "none": None,
    "list": [1, 2, 3],
    "empty": [[], (), {}],
    "tuple": (1, (2, 3), [4]),
    "dict_order": {"b": 1, "a": 2, "c": [3, 4]},
    "dict_mixed_keys": {"a": 1, 2: [3], (1, 2): 4},
    "nested": {"x": [1, {"y": (2, 3), "z": None}], "w": ()},
    "namedtuple": Point(1, [2, 3]),
    "ordereddict": OrderedDict([("b", 1), ("a", (2,))]),
    "defaultdict": defaultdict(list, {"k": 1, "j": [2]}),
    "deque": deque([1, 2, 3], maxlen=5),
    "deque_unbounded": deque([1, [2]]),
    "strings": ["ab", ("c", b"d")],
    "enum_keys": {Color.RED: 1, "other": 2},
}


@pytest.fixture(params=sorted(STRUCTURES))
def tree(request):
    return STRUCTURES[request.param]


def _dump_or_error(mod, spec):
    try:
        return mod.treespec_dumps(spec)
    except Exception as e:  # noqa: BLE001  (both libraries must refuse alike)
        return type(e)


def test_flatten_matches_torch(tree):
    g_leaves, g_spec = gp.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert g_leaves == t_leaves
    assert repr(g_spec) == repr(t_spec)
    assert str(g_spec) == str(t_spec)
    for attr in ("num_leaves", "num_nodes", "num_children"):
        assert getattr(g_spec, attr) == getattr(t_spec, attr)
    assert g_spec.is_leaf() == t_spec.is_leaf()
    assert gp.treespec_pprint(g_spec) == tp.treespec_pprint(t_spec)
    assert gp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert list(gp.tree_iter(tree)) == list(tp.tree_iter(tree))
    rebuilt = gp.tree_unflatten(g_leaves, g_spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)


def test_dumps_is_torchs_json(tree):
    g_spec, t_spec = gp.tree_structure(tree), tp.tree_structure(tree)
    dumped = _dump_or_error(gp, g_spec)
    assert dumped == _dump_or_error(tp, t_spec)
    if isinstance(dumped, str):
        # loading gives what torch's loading gives (JSON turns tuple dict keys into lists)
        loaded = gp.treespec_loads(dumped)
        assert repr(loaded) == repr(tp.treespec_loads(dumped))
        assert (loaded == g_spec) == (tp.treespec_loads(dumped) == t_spec)
        # a spec torch wrote loads here, and the other way round
        assert repr(gp.treespec_loads(tp.treespec_dumps(t_spec))) == \
            repr(tp.treespec_loads(tp.treespec_dumps(t_spec)))


def test_spec_equality_hash_copy(tree):
    a, b = gp.tree_structure(tree), gp.tree_structure(copy.deepcopy(tree))
    assert a == b and hash(a) == hash(b)
    assert copy.deepcopy(a) == a
    assert pickle.loads(pickle.dumps(a)) == a
    if a.num_leaves:
        assert a != gp.tree_structure([tree])
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.type = list


def test_key_paths_match_torch(tree):
    g_pairs, g_spec = gp.tree_flatten_with_path(tree)
    t_pairs, _ = tp.tree_flatten_with_path(tree)
    assert [gp.keystr(p) for p, _ in g_pairs] == [tp.keystr(p) for p, _ in t_pairs]
    assert [repr(p) for p, _ in g_pairs] == [repr(p) for p, _ in t_pairs]
    assert [v for _, v in g_pairs] == [v for _, v in t_pairs]
    for path, value in g_pairs:
        assert gp.key_get(tree, path) == value
    assert [p for p, _ in gp.tree_leaves_with_path(tree)] == [p for p, _ in g_pairs]


def test_return_types_and_size():
    gx = glasstorch.arange(6.0).reshape(2, 3)
    tx = torch.arange(6.0).reshape(2, 3)
    for name, args in (("max", (1,)), ("sort", (1,)), ("aminmax", ()), ("topk", (2,))):
        g_out = getattr(glasstorch, name)(gx, *args)
        t_out = getattr(torch, name)(tx, *args)
        g_spec, t_spec = gp.tree_structure(g_out), tp.tree_structure(t_out)
        assert repr(g_spec) == repr(t_spec)
        assert gp.treespec_pprint(g_spec) == tp.treespec_pprint(t_spec)
        assert type(gp.tree_map(lambda t: t * 2, g_out)) is type(g_out)
        with pytest.raises(NotImplementedError):  # torch gives them no serialised name
            gp.treespec_dumps(g_spec)
        paths = [gp.keystr(p) for p, _ in gp.tree_leaves_with_path(g_out)]
        assert paths == [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(t_out)]
    g_spec = gp.tree_structure(glasstorch.Size([2, 3]))
    t_spec = tp.tree_structure(torch.Size([2, 3]))
    assert repr(g_spec) == repr(t_spec)
    assert gp.treespec_dumps(g_spec) == tp.treespec_dumps(t_spec)
    assert gp.tree_leaves(glasstorch.Size([2, 3])) == [2, 3]
    assert gp.tree_unflatten([4, 5], g_spec) == (4, 5)  # rebuilt as a tuple, as torch does


def test_is_leaf_argument():
    tree = {"a": [1, 2], "b": (3, [4])}
    for mod in (gp, tp):
        leaves, spec = mod.tree_flatten(tree, is_leaf=lambda x: isinstance(x, list))
        assert leaves == [[1, 2], 3, [4]]
    g = gp.tree_structure(tree, is_leaf=lambda x: isinstance(x, list))
    t = tp.tree_structure(tree, is_leaf=lambda x: isinstance(x, list))
    assert repr(g) == repr(t)
    assert gp.tree_is_leaf((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    assert gp.tree_is_leaf(None) and gp.tree_is_leaf(glasstorch.ones(2))
    assert not gp.tree_is_leaf({"a": None})


def test_tree_map_and_friends():
    tree = {"x": 7, "y": (42, 64), "z": [1.5, "s"]}
    f = lambda v: v * 2  # noqa: E731
    assert gp.tree_map(f, tree) == tp.tree_map(f, tree)
    # rests need only have tree's structure as a prefix
    assert gp.tree_map(lambda a, b: [a] + b, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    # dict-like containers match by keys
    assert gp.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, OrderedDict(b=3, a=4)) == \
        tp.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, OrderedDict(b=3, a=4))
    assert gp.tree_map_only(int, f, tree) == tp.tree_map_only(int, f, tree)
    assert gp.tree_map_only((int, float), f, tree) == tp.tree_map_only((int, float), f, tree)
    assert gp.tree_map_only(lambda v: v == 7, f, tree) == tp.tree_map_only(lambda v: v == 7, f,
                                                                           tree)
    seen = []
    assert gp.tree_map_(seen.append, tree) is tree
    assert seen == tp.tree_leaves(tree)
    seen.clear()
    gp.tree_map_only_(str, seen.append, tree)
    assert seen == ["s"]
    is_num = lambda v: isinstance(v, (int, float))  # noqa: E731
    for name in ("tree_all", "tree_any"):
        assert getattr(gp, name)(is_num, tree) == getattr(tp, name)(is_num, tree)
    for name in ("tree_all_only", "tree_any_only"):
        assert getattr(gp, name)(int, lambda v: v > 10, tree) == \
            getattr(tp, name)(int, lambda v: v > 10, tree)
    mapped = gp.tree_map_with_path(lambda p, v, w: (gp.keystr(p), v, w), [1, {"a": 2}],
                                   [10, {"a": 20}])
    assert mapped == [("[0]", 1, 10), ({"a": ("[1]['a']", 2, 20)})]
    assert gp.arg_tree_leaves(1, [2, (3,)], k={"a": 4}) == tp.arg_tree_leaves(1, [2, (3,)],
                                                                             k={"a": 4})
    with pytest.raises(TypeError):
        gp.tree_map_only(3, f, tree)


@pytest.mark.parametrize("a, b", [
    ([1, 2], [1]),
    ({"a": 1}, {"b": 1}),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2, "d": 3}),
    ([1], (1,)),
    (Point(1, 2), (1, 2)),
    (Point(1, 2), namedtuple("Other", "x y")(1, 2)),
])
def test_structure_mismatch_errors_match_torch(a, b):
    with pytest.raises(ValueError) as t_err:
        tp.tree_map(lambda x, y: x, a, b)
    with pytest.raises(ValueError) as g_err:
        gp.tree_map(lambda x, y: x, a, b)
    # messages name types by repr, which differ only in object addresses
    assert str(g_err.value).split(" at 0x")[0] == str(t_err.value).split(" at 0x")[0]


def test_unflatten_errors_match_torch():
    spec_g, spec_t = gp.tree_structure([1, 2]), tp.tree_structure([1, 2])
    with pytest.raises(ValueError) as t_err:
        tp.tree_unflatten([1], spec_t)
    with pytest.raises(ValueError) as g_err:
        gp.tree_unflatten([1], spec_g)
    assert str(g_err.value) == str(t_err.value)
    with pytest.raises(TypeError, match="PyTreeSpec"):
        gp.tree_unflatten([1], [1])
    assert gp.tree_unflatten(spec_g, [5, 6]) == [5, 6]  # torch accepts the spec first too
    assert gp.treespec_loads(gp.treespec_dumps(spec_g)).unflatten(iter([7, 8])) == [7, 8]
    with pytest.raises(ValueError, match="Unknown protocol"):
        gp.treespec_dumps(spec_g, protocol=3)


def test_flatten_up_to():
    spec = gp.tree_structure({"a": 0, "b": [0, 0]})
    assert spec.flatten_up_to({"b": [[1], {"x": 2}], "a": (3,)}) == [(3,), [1], {"x": 2}]
    spec_t = tp.tree_structure({"a": 0, "b": [0, 0]})
    assert spec_t.flatten_up_to({"b": [[1], {"x": 2}], "a": (3,)}) == [(3,), [1], {"x": 2}]
    # deque maxlen and defaultdict factories may differ
    assert gp.tree_structure(deque([0], maxlen=2)).flatten_up_to(deque([5])) == [5]


def test_broadcast_to_and_flatten_matches_torch():
    for prefix, full in ((0, [1, (2, 3)]), ([0, 1], [1, (2, 3)]), ([0, 1, 2], [1, (2, 3)]),
                         ({"a": 1}, {"a": [1, 2]})):
        g = gp._broadcast_to_and_flatten(prefix, gp.tree_structure(full))
        t = tp._broadcast_to_and_flatten(prefix, tp.tree_structure(full))
        assert g == t


def test_treespec_builders_and_accessors():
    spec = gp.treespec_dict(a=gp.treespec_leaf(), b=gp.treespec_tuple([gp.treespec_leaf()] * 2))
    assert spec == gp.tree_structure({"a": 0, "b": (0, 0)})
    assert repr(spec) == repr(tp.treespec_dict(a=tp.treespec_leaf(),
                                               b=tp.treespec_tuple([tp.treespec_leaf()] * 2)))
    assert spec.context == ["a", "b"] and spec.child(1).num_leaves == 2
    kids = spec.children()
    kids.clear()
    assert spec.num_children == 2  # children() is a copy
    with pytest.warns(FutureWarning):
        assert len(spec.children_specs) == 2
    with pytest.warns(FutureWarning):
        gp.LeafSpec()
    with pytest.raises(ValueError):
        gp.treespec_tuple([1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.tree_flatten([1, 2])  # the shared leaf spec does not warn


def test_namedtuple_and_structseq_predicates():
    samples = [Point(1, 2), Point, (1, 2), os.stat("."), time.gmtime(), type(time.gmtime())]
    for obj in samples:
        for name in ("is_namedtuple", "is_structseq"):
            assert getattr(gp, name)(obj) == getattr(tp, name)(obj), (name, obj)
        if not isinstance(obj, type):
            assert gp.is_namedtuple_instance(obj) == tp.is_namedtuple_instance(obj)
            assert gp.is_structseq_instance(obj) == tp.is_structseq_instance(obj)
            assert gp.tree_leaves(obj) == tp.tree_leaves(obj)
    with pytest.raises(TypeError):
        type("Sub", (gp.structseq,), {})


def _register_both(cls, **kw):
    for mod in (gp, tp):
        mod.register_pytree_node(
            cls, lambda o: ([o.a, o.b], o.tag), lambda vals, tag: cls(*vals, tag),
            flatten_with_keys_fn=lambda o: ([(mod.GetAttrKey("a"), o.a),
                                             (mod.GetAttrKey("b"), o.b)], o.tag), **kw)


class Pair:
    def __init__(self, a, b, tag="p"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return (self.a, self.b, self.tag) == (other.a, other.b, other.tag)


def test_register_pytree_node_like_torch():
    _register_both(Pair, serialized_type_name="tests.Pair")
    try:
        tree = {"p": Pair(1, [2, 3], "t")}
        g_spec, t_spec = gp.tree_structure(tree), tp.tree_structure(tree)
        assert gp.tree_leaves(tree) == tp.tree_leaves(tree) == [1, 2, 3]
        assert repr(g_spec) == repr(t_spec)
        assert gp.treespec_dumps(g_spec) == tp.treespec_dumps(t_spec)
        assert gp.treespec_loads(gp.treespec_dumps(g_spec)) == g_spec
        assert gp.tree_map(lambda v: v + 1, tree) == {"p": Pair(2, [3, 4], "t")}
        assert [gp.keystr(p) for p, _ in gp.tree_leaves_with_path(tree)] == \
            ["['p'].a", "['p'].b[0]", "['p'].b[1]"]
        with pytest.raises(ValueError, match="already registered"):
            gp.register_pytree_node(Pair, lambda o: ([], None), lambda v, c: Pair(0, 0))
        with pytest.raises(ValueError, match="context mismatch"):
            g_spec.flatten_up_to({"p": Pair(1, [2, 3], "other")})
        with pytest.warns(FutureWarning), pytest.warns(UserWarning, match="Overwriting"):
            # the deprecated spelling may re-register, with a warning
            gp._register_pytree_node(Pair, lambda o: ([o.a, o.b], o.tag),
                                     lambda vals, tag: Pair(*vals, tag),
                                     serialized_type_name="tests.Pair")
    finally:
        gp._deregister_pytree_node(Pair)
        tp._deregister_pytree_node(Pair)
    assert gp.tree_leaves(Pair(1, 2)) == [Pair(1, 2)]


def test_unregistered_serialisation_and_keys_errors():
    class Box:
        def __init__(self, v):
            self.v = v
    gp.register_pytree_node(Box, lambda b: ([b.v], None), lambda vals, _: Box(vals[0]))
    try:
        spec = gp.tree_structure([Box(1)])
        with pytest.raises(NotImplementedError, match="serialized_type_name"):
            gp.treespec_dumps(spec)
        with pytest.raises(ValueError, match="flatten_with_keys_fn"):
            gp.tree_flatten_with_path([Box(1)])
    finally:
        gp._deregister_pytree_node(Box)
    with pytest.raises(NotImplementedError, match="_register_namedtuple"):
        gp.treespec_dumps(gp.tree_structure(Point(1, 2)))
    with pytest.raises(TypeError, match="json dump-able"):
        gp.treespec_dumps(gp.tree_structure({object(): 1}))


def test_register_dataclass_and_constant():
    @dataclasses.dataclass
    class Cfg:
        w: object
        b: object = None

    for mod in (gp, tp):
        mod.register_dataclass(Cfg, serialized_type_name="tests.Cfg")
    try:
        for obj in (Cfg(1, [2]), Cfg([1, 2])):
            assert gp.tree_leaves(obj) == tp.tree_leaves(obj)
            assert repr(gp.tree_structure(obj)) == repr(tp.tree_structure(obj))
            assert gp.tree_map(lambda v: v, obj) == obj
            assert gp.treespec_dumps(gp.tree_structure(obj)) == \
                tp.treespec_dumps(tp.tree_structure(obj))
    finally:
        gp._deregister_pytree_node(Cfg)
        tp._deregister_pytree_node(Cfg)
    with pytest.raises(ValueError, match="field_names"):
        gp.register_dataclass(Pair)

    @dataclasses.dataclass(frozen=True)
    class Const:
        norm: str

    gp.register_constant(Const)
    try:
        leaves, spec = gp.tree_flatten([Const("l2"), 1])
        assert leaves == [1]
        assert gp.tree_unflatten([5], spec) == [Const("l2"), 5]
        assert gp.is_constant_class(Const)
        assert gp._retrieve_constant(spec.child(0)) == Const("l2")
    finally:
        gp._deregister_pytree_node(Const)
    with pytest.raises(TypeError, match="__eq__"):
        gp.register_constant(Pair.__mro__[-1])


def test_registered_namedtuple_and_defaultdict_roundtrip():
    gp._register_namedtuple(Point, serialized_type_name="tests.Point")
    tp._register_namedtuple(Point, serialized_type_name="tests.Point")
    try:
        spec = gp.tree_structure({"p": Point(1, defaultdict(int, a=2))})
        dumped = gp.treespec_dumps(spec)
        assert dumped == tp.treespec_dumps(tp.tree_structure({"p": Point(1, defaultdict(
            int, a=2))}))
        assert gp.treespec_loads(dumped) == spec
    finally:
        gp._deregister_pytree_node(Point)
        tp._deregister_pytree_node(Point)
