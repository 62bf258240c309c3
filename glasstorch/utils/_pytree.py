"""Pytrees: nested containers (tuples, lists, dicts, namedtuples...) treated as trees whose
leaves are everything else, as ``torch.utils._pytree``.

``tree_flatten`` turns a tree into its leaves plus a ``TreeSpec`` describing the containers;
``tree_unflatten`` rebuilds it; ``tree_map`` applies a function to every leaf. A container type
becomes a node by registering a flatten function (children + context) and an unflatten function
(``register_pytree_node``). ``treespec_dumps``/``treespec_loads`` write and read torch's JSON
format (protocol 1), so specs saved by either library load in the other.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable
from enum import Enum
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps",
    "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"

Context = Any
PyTree = Any
DumpableContext = Any  # anything json.dumps accepts
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], "tuple[list[tuple[Any, Any]], Any]"]
FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn


class KeyEntry(Protocol):
    """One step of a key path: hashable, printable, and able to fetch a child (``get``)."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple  # tuple of KeyEntry


class NodeDef(NamedTuple):
    """How a registered node type flattens (children, context) and unflattens."""
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: FlattenWithKeysFn | None


class _SerializeNodeDef(NamedTuple):
    """The name a node type is written under in JSON, and its context converters."""
    typ: type
    serialized_type_name: str
    to_dumpable_context: ToDumpableContextFn | None
    from_dumpable_context: FromDumpableContextFn | None


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict = {}
SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}
CONSTANT_NODES: set = set()


class EnumEncoder(json.JSONEncoder):
    """JSON encoder that writes Enum members as ``{"__enum__": True, "fqn", "name"}``."""

    def default(self, obj):
        """Encode an Enum member by its class's import path and its name."""
        if isinstance(obj, Enum):
            cls = type(obj)
            return {"__enum__": True, "fqn": f"{cls.__module__}:{cls.__qualname__}",
                    "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    """``json.loads`` hook turning EnumEncoder's dicts back into Enum members."""
    if "__enum__" not in obj:
        return obj
    module_name, _, qualname = obj["fqn"].partition(":")
    cls = importlib.import_module(module_name)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls[obj["name"]]


# ----------------------------------------------------------------------------- registration

def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None):
    """Register ``cls`` (overwriting an earlier registration with a warning)."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the "
                          f"previous registration.", stacklevel=2)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) != (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} "
                             f"must be None or registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else \
            serialized_type_name
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context,
                                                            from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Register a container type as a pytree node.

    ``flatten_fn(obj) -> (children, context)``, ``unflatten_fn(children, context) -> obj``.
    ``serialized_type_name`` names the type in ``treespec_dumps``; ``to_dumpable_context`` /
    ``from_dumpable_context`` convert a context that is not JSON-serialisable;
    ``flatten_with_keys_fn(obj) -> ([(key_entry, child)...], context)`` enables the
    ``*_with_path`` functions. Registering a type twice is a ValueError.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None,
                          *, serialized_type_name=None, to_dumpable_context=None,
                          from_dumpable_context=None, flatten_with_keys_fn=None):
    """Deprecated spelling of :func:`register_pytree_node` (re-registration only warns)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning,
                  stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use "
                      "`to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    """Remove ``cls`` from the registry (used by tests that register temporary types)."""
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        entry = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(entry.serialized_type_name, None)
        CONSTANT_NODES.discard(cls)


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None):
    """Register a dataclass (or a class built from keyword fields) as a pytree node.

    Its children are the non-None values of ``field_names`` (by default the dataclass's init
    fields, less ``drop_field_names``); None fields are remembered in the context.
    """
    drop = set(drop_field_names or ())
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError(f"field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    else:
        init_fields = [f.name for f in dataclasses.fields(cls) if f.init]
        if field_names is None:
            field_names = init_fields
        else:
            expected = set(init_fields) - drop
            if expected != set(field_names):
                msg = "field_names does not include all dataclass fields.\n"
                missing, unexpected = expected - set(field_names), set(field_names) - expected
                if missing:
                    msg += (f"Missing fields in `field_names`: {missing}. If you want to include "
                            f"these fields in the pytree, please add them to `field_names`, "
                            f"otherwise please add them to `drop_field_names`.\n")
                if unexpected:
                    msg += (f"Unexpected fields in `field_names`: {unexpected}. Please remove "
                            f"these fields, or add them to `drop_field_names`.\n")
                raise ValueError(msg)
    names = list(field_names)

    def flatten(obj):
        present = [n for n in names if getattr(obj, n) is not None]
        absent = [n for n in names if getattr(obj, n) is None]
        return [getattr(obj, n) for n in present], [present, absent]

    def unflatten(values, context):
        present, absent = context
        kwargs = dict(zip(present, values, strict=True))
        kwargs.update(dict.fromkeys(absent))
        return cls(**kwargs)

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values)], present

    _private_register_pytree_node(cls, flatten, unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode(Generic[T]):
    """The context of a type registered with :func:`register_constant`: the value itself."""
    value: T


def register_constant(cls):
    """Register ``cls`` as a node with no leaves: its instances travel whole in the spec's
    context (so they must compare and hash by value)."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` "
                        "implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default "
                        "`__hash__` implementation.")

    def flatten(obj):
        return [], ConstantNode(obj)

    def unflatten(_, context):
        return context.value

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    """Whether ``cls`` was registered with :func:`register_constant`."""
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _is_constant_holder(spec):
    return isinstance(spec._context, ConstantNode)


def _retrieve_constant(spec):
    """The constant a spec of a :func:`register_constant` type holds."""
    if not _is_constant_holder(spec):
        raise AssertionError("spec does not correspond to a registered constant pytree")
    return tree_unflatten([], spec)


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a serialised name so specs containing it can be dumped."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


# ----------------------------------------------------------------------------- key entries

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(Generic[T]):
    """Key path entry: position ``idx`` in a sequence; prints as ``[0]``."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        """``sequence[idx]``."""
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey(Generic[K, T]):
    """Key path entry: ``key`` of a mapping; prints as ``['a']``."""
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        """``mapping[key]``."""
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Key path entry: attribute ``name``; prints as ``.name``."""
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        """``getattr(obj, name)``."""
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as text, e.g. ``['layers'][0].weight``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path ``kp`` inside ``obj``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ------------------------------------------------------------------- namedtuple / structseq

def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class (a tuple subclass with ``_fields``, ``_make``
    and ``_asdict``)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether ``obj`` is a namedtuple instance or a namedtuple class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether ``obj`` is an instance of a namedtuple class."""
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10  # CPython: the type may be subclassed


def is_structseq_class(cls):
    """Whether ``cls`` is a C-level PyStructSequence type (``os.stat_result``,
    ``time.struct_time``...): a direct, final tuple subclass with ``n_fields``."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & _Py_TPFLAGS_BASETYPE)


def is_structseq(obj):
    """Whether ``obj`` is a PyStructSequence instance or type."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    """Whether ``obj`` is an instance of a PyStructSequence type."""
    return is_structseq_class(type(obj))


class structseq(tuple):
    """Typing stand-in for CPython's PyStructSequence (cannot be subclassed or built)."""

    __slots__ = ()

    def __init_subclass__(cls):
        raise TypeError("type 'structseq' is not an acceptable base type")

    def __new__(cls, sequence, dict=None):
        raise TypeError("structseq is a typing stand-in; build the concrete type instead")


# ----------------------------------------------------------------------------- built-in nodes

def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return _seq_keys(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return _seq_keys(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(type(d)._fields, d, strict=True)], type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    entry = SUPPORTED_SERIALIZED_TYPES.get(context)
    if entry is None:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we didn't register "
            f"a serializated_type_name. Please register using `_register_namedtuple`.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't find a "
            f"serializated_type_name. Please register using `_register_namedtuple`.")
    return entry.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class "
                                  f"{dumpable_context} because we couldn't find a serializated "
                                  f"name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, zip(keys, values, strict=True))


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context):
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    if set(dumpable_context) != expected:
        raise AssertionError(f"dumpable_context keys must be {expected}, got "
                             f"{set(dumpable_context)}")
    module_name = dumpable_context["default_factory_module"]
    name = dumpable_context["default_factory_name"]
    if not isinstance(module_name, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(name, str):
        raise AssertionError("default_factory_name must be a string")
    factory = getattr(importlib.import_module(module_name), name)
    return [factory, dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                              serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=_tuple_flatten_with_keys)
_private_register_pytree_node(list, _list_flatten, _list_unflatten,
                              serialized_type_name="builtins.list",
                              flatten_with_keys_fn=_list_flatten_with_keys)
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                              serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
# Every namedtuple class is a node through this one entry, keyed by the factory function.
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              serialized_type_name="collections.namedtuple",
                              to_dumpable_context=_namedtuple_serialize,
                              from_dumpable_context=_namedtuple_deserialize,
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_ordereddict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              serialized_type_name="collections.defaultdict",
                              to_dumpable_context=_defaultdict_serialize,
                              from_dumpable_context=_defaultdict_deserialize,
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten,
                              serialized_type_name="collections.deque",
                              flatten_with_keys_fn=_deque_flatten_with_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})

# Types that are namedtuples in glasstorch but stand for torch's structseqs: they are nodes of
# their own type (``TreeSpec(max, None, ...)``), not of ``namedtuple``.
_OWN_TYPE_NODES: set = set()


def _get_node_type(tree):
    t = type(tree)
    if t in _OWN_TYPE_NODES:
        return t
    if is_namedtuple_class(t):
        return namedtuple  # every namedtuple class shares the one registration
    return t


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: not a registered node type, or ``is_leaf(tree)`` is true.
    ``None`` is a leaf."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None):
    """Deprecated alias of :func:`tree_is_leaf`."""
    warnings.warn("torch.utils._pytree._is_leaf is private and will be removed in a future "
                  "release. Please use torch.utils._pytree.tree_is_leaf instead.",
                  FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf)


def _is_namedtuple_instance(tree):
    """Deprecated alias of :func:`is_namedtuple_instance`."""
    warnings.warn("torch.utils._pytree._is_namedtuple_instance is private and will be removed "
                  "in a future release. Please use "
                  "torch.utils._pytree.is_namedtuple_instance instead.", FutureWarning,
                  stacklevel=2)
    return is_namedtuple_instance(tree)


# ----------------------------------------------------------------------------- TreeSpec

@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """The structure of a pytree: the root's node type and context, and one child spec per
    child (a leaf is ``type=None``). Immutable, hashable, comparable."""

    type: Any
    _context: Any
    _children: list
    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type, context, children_specs):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self):
        if self.type is None:  # a leaf
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if self._children:
                raise AssertionError("leaf node should not have children")
            nodes = leaves = 1
        else:
            nodes = 1 + sum(c.num_nodes for c in self._children)
            leaves = sum(c.num_leaves for c in self._children)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(self._children))

    def __repr__(self, indent=0):
        head = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if not self._children:
            return head + "])"
        indent += 2
        parts = [c.__repr__(indent) for c in self._children]
        return head + (",\n" + " " * indent).join(parts) + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            key = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            key = tuple(ctx)
        elif t is None or t in BUILTIN_TYPES:
            key = ctx
        elif isinstance(ctx, ConstantNode):
            key = ctx.value
        else:
            key = None  # a user type's context may not hash; equal specs still hash equal
        return hash((t, key, tuple(self._children)))

    @property
    def context(self):
        """The root node's context (dict keys, namedtuple class, deque maxlen...)."""
        return self._context

    @property
    def children_specs(self):
        """Deprecated: the list of child specs (use ``children()`` or ``child(i)``)."""
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to "
                      "access a single child, or `treespec.children()` to get all children.",
                      FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """A copy of the list of child specs."""
        return list(self._children)

    def child(self, index):
        """The child spec at ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` sitting where this spec has leaves (``tree`` must have this
        spec as a prefix; dict-like types may stand in for each other)."""
        out = []
        _flatten_up_to(self, tree, out)
        return out

    def unflatten(self, leaves):
        """Build the pytree this spec describes with ``leaves`` in order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return _unflatten(self, leaves, 0)


def _unflatten(spec, leaves, start):
    if spec.type is None:
        return leaves[start]
    children = []
    for c in spec._children:
        children.append(_unflatten(c, leaves, start))
        start += c.num_leaves
    return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec._context)


def _flatten_up_to(spec, node, out):
    if spec.is_leaf():
        out.append(node)
        return
    node_type = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:
        # user node types must match exactly, context included
        if node_type != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    else:
        dict_like = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not dict_like and node_type != spec.type:
            raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got "
                             f"{node_type!r}.")
        if len(node) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(node)}.")
        if dict_like:
            # dict, OrderedDict and defaultdict match by keys (any order, factory ignored)
            keys = spec._context[1] if spec.type is defaultdict else spec._context
            got, want = set(node), set(keys)
            if got != want:
                msg = ""
                if want - got:
                    msg += f"; missing key(s): {want - got}"
                if got - want:
                    msg += f"; extra key(s): {got - want}"
                raise ValueError(f"Node keys mismatch{msg}.")
            children = [node[k] for k in keys]
        else:
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if node_type is not deque and context != spec._context:  # deque maxlen may differ
                raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected "
                                 f"{spec._context!r}, but got {context!r}.")
    for child, child_spec in zip(children, spec._children, strict=True):
        _flatten_up_to(child_spec, child, out)


PyTreeSpec = TreeSpec


@dataclasses.dataclass(init=False, frozen=True, eq=False, repr=False, slots=True)
class LeafSpec(TreeSpec):
    """Deprecated: the spec of a single leaf (use :func:`treespec_leaf`)."""

    def __init__(self):
        object.__setattr__(self, "type", None)
        object.__setattr__(self, "_context", None)
        object.__setattr__(self, "_children", [])
        object.__setattr__(self, "num_nodes", 1)
        object.__setattr__(self, "num_leaves", 1)
        object.__setattr__(self, "num_children", 0)

    def __new__(cls, *args, **kwargs):
        if _LEAF_SPEC_BUILT:
            warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use "
                          "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                          FutureWarning, stacklevel=2)
        return object.__new__(cls)

    def __reduce__(self):
        # copies and pickles come back as the shared leaf spec, without the warning
        return treespec_leaf, ()

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC_BUILT = False
_LEAF_SPEC = LeafSpec()  # all leaves share one spec object
_LEAF_SPEC_BUILT = True


def treespec_leaf():
    """The spec of a single leaf."""
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    """A tuple spec with the given child specs."""
    children = list(iterable)
    if not all(isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    """A dict spec with the given child specs (a mapping or key/spec pairs, plus keywords)."""
    d = dict(mapping, **kwargs)
    if not all(isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d), list(d.values()))


def _is_pytreespec_instance(obj):
    return isinstance(obj, TreeSpec)


def _ensure_python_treespec_instance(treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                        f"type {type(treespec)}.")
    return treespec


# ----------------------------------------------------------------------------- flatten / map

def tree_flatten(tree, is_leaf=None):
    """``(leaves, treespec)``: the leaves of ``tree`` in order and its structure."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(node, is_leaf, leaves):
    if tree_is_leaf(node, is_leaf):
        leaves.append(node)
        return _LEAF_SPEC
    node_type = _get_node_type(node)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves, treespec):
    """Rebuild the pytree ``treespec`` describes from ``leaves`` (inverse of tree_flatten)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item "
                            f"of type {type(treespec)}.")
        leaves, treespec = treespec, leaves  # torch accepts the spec first too
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of ``tree``."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree`` as a list."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    """The TreeSpec of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A new pytree shaped like ``tree`` whose leaves are ``func(leaf, *matching_in_rests)``;
    each of ``rests`` must have ``tree``'s structure as a prefix."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on every leaf (for its side effects, e.g. in-place ops); return ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for _ in map(func, *columns):
        pass
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: the wrapped function applies only to values of the given type(s) (or those
    the predicate accepts) and returns anything else unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map` applying ``func`` only to leaves of the given type(s)."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map_` applying ``func`` only to leaves of the given type(s)."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree`` (a prefix of the structure ``treespec`` describes) broadcast to one value per
    leaf of ``treespec``, flattened; None when it is not a prefix (used by vmap's in_dims)."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    out = []

    def extend(x, subtree):
        out.extend([x] * tree_structure(subtree, is_leaf).num_leaves)

    try:
        tree_map_(extend, tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


def arg_tree_leaves(*args, **kwargs):
    """The leaves of ``(args, kwargs)`` in order (a faster ``tree_leaves((args, kwargs))``)."""
    out = []
    for a in args:
        out.extend(tree_iter(a))
    for a in kwargs.values():
        out.extend(tree_iter(a))
    return out


# ----------------------------------------------------------------------------- key paths

def _key_paths(path, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    node_type = _get_node_type(tree)
    entry = SUPPORTED_NODES.get(node_type)
    if entry is None:
        yield path, tree
        return
    if entry.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please "
                         f"pass a flatten_with_keys_fn argument to register_pytree_node.")
    key_children, _ = entry.flatten_with_keys_fn(tree)
    for k, child in key_children:
        yield from _key_paths((*path, k), child, is_leaf)


_generate_key_paths = _key_paths


def tree_flatten_with_path(tree, is_leaf=None):
    """Like :func:`tree_flatten`, with each leaf paired with its key path:
    ``([(path, leaf)...], treespec)``."""
    spec = tree_structure(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    """``[(key_path, leaf)...]`` for every leaf of ``tree``."""
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like :func:`tree_map`, but ``func(key_path, leaf, *matching_in_rests)``."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in pairs], [v for _, v in pairs]]
    columns += [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns, strict=True))


# ----------------------------------------------------------------------------- serialisation

@dataclasses.dataclass
class _TreeSpecSchema:
    """The JSON form of one spec node: type name (None for a leaf), dumped context, children."""
    type: str | None
    context: DumpableContext
    children_spec: list


class _ProtocolFn(NamedTuple):
    treespec_to_json: Callable
    json_to_treespec: Callable


def _treespec_to_json(spec):
    if spec.is_leaf():
        return _TreeSpecSchema(None, None, [])
    entry = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if entry is None:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {spec.type} found. Please update your "
            f"_register_pytree_node call with a `serialized_type_name` kwarg.")
    if entry.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json "
                            "dump-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = entry.to_dumpable_context(spec._context)
    return _TreeSpecSchema(entry.serialized_type_name, context,
                           [_treespec_to_json(c) for c in spec._children])


def _json_to_treespec(schema):
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(schema["type"])
    if typ is None:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    entry = SUPPORTED_SERIALIZED_TYPES[typ]
    if entry.from_dumpable_context is None:
        try:
            context = json.loads(schema["context"], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError("Unable to deserialize context. Please make the context json "
                            "load-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = entry.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema["children_spec"]])


_SUPPORTED_PROTOCOLS = {1: _ProtocolFn(_treespec_to_json, _json_to_treespec)}


def _unknown_protocol(protocol):
    return ValueError(f"Unknown protocol {protocol}. Available protocols: "
                      f"{list(_SUPPORTED_PROTOCOLS)}")


def treespec_dumps(treespec, protocol=None):
    """``treespec`` as torch's JSON text: ``[protocol, {"type", "context", "children_spec"}]``
    (contexts are themselves JSON strings)."""
    treespec = _ensure_python_treespec_instance(treespec)
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    schema = _SUPPORTED_PROTOCOLS[protocol].treespec_to_json(treespec)
    return json.dumps((protocol, dataclasses.asdict(schema)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """The TreeSpec that :func:`treespec_dumps` wrote as ``serialized``."""
    protocol, schema = json.loads(serialized)
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return _SUPPORTED_PROTOCOLS[protocol].json_to_treespec(schema)


class _Asterisk(str):
    """A leaf placeholder that prints as a bare ``*``."""

    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec):
    """The spec drawn as its pytree with ``*`` at the leaves, e.g. ``{'a': *, 'b': [*, *]}``."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))


def pytree_to_str(treespec):
    """Deprecated alias of :func:`treespec_dumps`."""
    warnings.warn("`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.",
                  FutureWarning, stacklevel=2)
    return treespec_dumps(treespec)


def str_to_pytree(json):
    """Deprecated alias of :func:`treespec_loads`."""
    warnings.warn("`str_to_pytree` is deprecated. Please use `treespec_loads` instead.",
                  FutureWarning, stacklevel=2)
    return treespec_loads(json)


# ------------------------------------------------------------------- glasstorch's own nodes

def _register_glasstorch_nodes():
    # torch registers torch.Size (flattening to its ints, rebuilt as a plain tuple) and every
    # torch.return_types structseq; glasstorch's counterparts get the same treatment.
    from .. import return_types
    from .._tensor import Size

    _private_register_pytree_node(Size, _tuple_flatten, _tuple_unflatten,
                                  serialized_type_name="torch.Size",
                                  flatten_with_keys_fn=_tuple_flatten_with_keys)

    def unflatten_as(cls):
        def unflatten(values, context):
            return cls._make(values)
        return unflatten

    for name in return_types.__all__:
        cls = getattr(return_types, name)
        _OWN_TYPE_NODES.add(cls)
        _private_register_pytree_node(cls, _tuple_flatten, unflatten_as(cls),
                                      flatten_with_keys_fn=_tuple_flatten_with_keys)


_register_glasstorch_nodes()
