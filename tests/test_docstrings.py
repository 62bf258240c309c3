"""Every public callable of the user-facing namespaces carries a docstring.

"Public" means: listed in the namespace's ``__all__`` (or, without one, any name not starting
with ``_``), plus the public methods and properties of the classes found there and of
``Tensor``. A class needs its own docstring; a method may inherit one from the method it
overrides (as ``help()`` shows it), so ``Linear.forward`` is covered by
``Module.forward``.
"""

import importlib
import inspect
import types

import glasstorch

NAMESPACES = [
    "glasstorch", "glasstorch.nn", "glasstorch.nn.functional", "glasstorch.nn.init",
    "glasstorch.nn.utils", "glasstorch.nn.utils.rnn", "glasstorch.nn.utils.parametrize",
    "glasstorch.nn.utils.parametrizations", "glasstorch.optim", "glasstorch.optim.lr_scheduler",
    "glasstorch.optim.swa_utils", "glasstorch.utils.data", "glasstorch.autograd",
    "glasstorch.autograd.functional", "glasstorch.autograd.graph", "glasstorch.autograd.graph_viz",
    "glasstorch.autograd.gradcheck", "glasstorch.serialization", "glasstorch.utils.safetensors",
    "glasstorch.utils.checkpoint", "glasstorch.utils.summary", "glasstorch.utils.tensorboard",
    "glasstorch.linalg", "glasstorch.random", "glasstorch.amp", "glasstorch.distributions",
    "glasstorch.distributions.constraints", "glasstorch.distributions.transforms",
    "glasstorch.profiler", "glasstorch.memory", "glasstorch.func", "glasstorch.cuda",
    "glasstorch.jit", "glasstorch.compiler", "glasstorch.distributed", "glasstorch.accelerator",
    "glasstorch.backends", "glasstorch.onnx", "glasstorch.onnx.errors",
]

def _function_of(attr):
    """The function behind a class attribute (method, static/class method, property)."""
    if isinstance(attr, (staticmethod, classmethod)):
        return attr.__func__
    if isinstance(attr, property):
        return attr.fget
    return attr if inspect.isfunction(attr) else None


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = dir(module)
    return [n for n in names if not n.startswith("_")]


def _is_public_callable(obj):
    return inspect.isclass(obj) or inspect.isroutine(obj)


def _namespace_members(modules):
    """(qualified name, object) for each public function and class of the modules."""
    out = {}
    for module in modules:
        ns = module.__name__
        for name in _public_names(module):
            obj = getattr(module, name, None)
            if isinstance(obj, types.ModuleType) or not _is_public_callable(obj):
                continue
            out.setdefault(id(obj), (f"{ns}.{name}", obj))
    return list(out.values())


def _class_members(cls):
    """(qualified name, defining class, attribute name) for each public method/property of
    ``cls`` defined by a glasstorch class in its MRO (``Tensor``'s are checked on their own)."""
    out = []
    seen = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("glasstorch") or klass is glasstorch.Tensor:
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen or _function_of(attr) is None:
                continue
            seen.add(name)
            out.append((f"{klass.__module__}.{klass.__qualname__}.{name}", klass, name))
    return out


def _inherited_doc(cls, name):
    """The docstring of ``cls.name``, or of the nearest base-class attribute it overrides."""
    for klass in cls.__mro__:
        attr = vars(klass).get(name)
        if attr is None:
            continue
        fn = _function_of(attr)
        if isinstance(attr, property) or fn is None:
            doc = getattr(attr, "__doc__", None)
        else:
            doc = fn.__doc__
        if (doc or "").strip():
            return doc
    return None


def _undocumented_members(modules):
    missing = []
    classes = {}
    for qualname, obj in _namespace_members(modules):
        if not (obj.__doc__ or "").strip():
            missing.append(qualname)
        if inspect.isclass(obj) and obj.__module__.startswith("glasstorch"):
            classes[obj] = None
    classes.pop(glasstorch.Tensor, None)
    for cls in classes:
        for qualname, owner, name in _class_members(cls):
            if not _inherited_doc(owner, name):
                missing.append(qualname)
    return sorted(set(missing))


def _tensor_member_doc(name):
    attr = inspect.getattr_static(glasstorch.Tensor, name)
    if isinstance(attr, property):
        return attr.__doc__ or (attr.fget.__doc__ if attr.fget else None)
    fn = _function_of(attr)
    return fn.__doc__ if fn is not None else "not a function"


def _tensor_public_members():
    names = []
    for name in dir(glasstorch.Tensor):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(glasstorch.Tensor, name)
        if isinstance(attr, property) or _function_of(attr) is not None:
            names.append(name)
    return names


def _namespace_modules():
    return [importlib.import_module(ns) for ns in NAMESPACES]


def test_public_namespaces_have_docstrings():
    missing = _undocumented_members(_namespace_modules())
    assert not missing, f"{len(missing)} public callables lack a docstring:\n" + "\n".join(
        missing)


def test_tensor_methods_have_docstrings():
    missing = [n for n in _tensor_public_members() if not (_tensor_member_doc(n) or "").strip()]
    assert not missing, "Tensor members without a docstring: " + ", ".join(sorted(missing))


def test_members_are_found():
    # guards the walk itself: a broken walk would find nothing and pass vacuously
    members = dict(_namespace_members([glasstorch, glasstorch.nn, glasstorch.optim,
                                       glasstorch.utils.data]))
    assert {"glasstorch.add", "glasstorch.nn.Linear", "glasstorch.optim.AdamW",
            "glasstorch.utils.data.DataLoader"} <= set(members)
    names = {q for q, _, _ in _class_members(glasstorch.nn.Linear)}
    assert "glasstorch.nn.modules.module.Module.state_dict" in names
    assert {"add", "view", "shape", "backward"} <= set(_tensor_public_members())


def test_undocumented_members_are_reported():
    class Base:
        """A documented base class."""

        def forward(self, x):
            """Documented here, inherited by overrides."""
            return x

    class Child(Base):
        """A documented subclass."""

        def forward(self, x):
            return x

        def helper(self):
            return None

    def bare():
        return None

    Base.__module__ = Child.__module__ = "glasstorch.fake"
    Base.__qualname__, Child.__qualname__ = "Base", "Child"
    fake = types.ModuleType("fake")
    fake.__all__ = ["Child", "bare"]
    fake.Child, fake.bare = Child, bare
    assert _undocumented_members([fake]) == ["fake.bare", "glasstorch.fake.Child.helper"]
