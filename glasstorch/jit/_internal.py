"""The TorchScript markers that model code applies (torch._jit_internal).

``@torch.jit.ignore``, ``unused`` and ``export`` tag a function for the TorchScript compiler and
return it; in eager code the function runs as written. The tag is kept
on the function as torch keeps it, so code that reads ``fn._torchscript_modifier`` sees the same
thing.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
import warnings

__all__ = ["FunctionModifiers", "export", "unused", "ignore", "is_scripting", "_overload",
           "_overload_method", "BroadcastingList1", "BroadcastingList2", "BroadcastingList3",
           "_isinstance", "_unwrap_optional"]


class FunctionModifiers:
    """What a marker tells the TorchScript compiler to do with a function."""

    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = ("if this method is not scripted, copy the python method onto the "
                              "scripted model")
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def is_scripting() -> bool:
    """True inside TorchScript-compiled code (``torch.jit.script`` folds the call to a
    constant True and drops the Python-only branch); False when called from Python. Lets code
    keep a Python-only branch: ``if not torch.jit.is_scripting(): ...``."""
    return False


def export(fn):
    """Mark a method of a ScriptModule for compilation even if ``forward`` does not call it;
    returns ``fn``."""
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn


def unused(fn):
    """Mark a function (or property) for the TorchScript compiler to replace with a raise;
    returns it. In eager code it runs normally."""
    if isinstance(fn, property):
        fn.fget._torchscript_modifier = FunctionModifiers.UNUSED
        if fn.fset is not None:
            fn.fset._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED
    return fn


def ignore(drop=False, **kwargs):
    """Mark a function for the TorchScript compiler to leave as a Python call: ``@ignore`` or
    ``@ignore(drop=False)``. Returns the function, which runs normally in eager code."""
    if callable(drop):
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now "
                      "drop the function call on compilation. Use torch.jit.unused now. {}",
                      category=FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}",
                      category=FutureWarning, stacklevel=2)
    modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE

    def decorator(fn):
        fn._torchscript_modifier = modifier
        return fn
    return decorator


# -- overload declarations: ``@torch.jit._overload def f(x: int) -> int: ...`` followed by the
# implementation. Eager code calls the implementation; the declarations are kept by name.
_overloaded_fns: dict = {}
_overloaded_methods: dict = {}

_OVERLOAD_EXAMPLE = """
Example usage of overload function:
@torch.jit._overload
def my_function(x: type0) -> type0: # decl 1
    pass

@torch.jit._overload
def my_function(x: type1) -> type1: # decl 2
    pass

def my_function(x):                 # implementation
    if isinstance(x, type0):
        return x
    elif isinstance(x, type1):
        return x
"""


def _check_overload_body(func):
    """An overload declaration's body must be ``pass`` or ``...`` (its source is read; when
    there is none, the check is skipped with a warning, as in torch)."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.",
                      stacklevel=3)
        return
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    body = defs[0].body if defs else []
    ok = len(body) == 1 and (isinstance(body[0], ast.Pass) or (
        isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis))
    if not ok:
        first_line = source.splitlines()[0] if source else ""
        raise RuntimeError(f"Only `pass` statement or `...` can be the body of overload "
                           f"declaration:\n{first_line}\n <- Expecting `pass` or `...` here!\n"
                           f"{_OVERLOAD_EXAMPLE}")


def _qualified_name(fn):
    return f"{fn.__module__}.{fn.__qualname__}"


def _overload(func):
    """Declare one typed signature of an overloaded function (for TorchScript); returns
    ``func``. Eager code calls the implementation defined after the declarations."""
    _check_overload_body(func)
    _overloaded_fns.setdefault(_qualified_name(func), []).append(func)
    return func


def _overload_method(func):
    """``_overload`` for a method declared in a class body; returns ``func``."""
    _check_overload_body(func)
    _overloaded_methods.setdefault(_qualified_name(func), []).append(func)
    return func


def _get_overloads(fn):
    """The overload declarations recorded for function ``fn`` (None if it has none)."""
    return _overloaded_fns.get(_qualified_name(fn))


class BroadcastingListCls:
    """``BroadcastingList2[int]``: TorchScript's "an int or a list of 2 ints" annotation. In
    Python it only has to be subscriptable (the subscript is None, as in torch)."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingList3 = BroadcastingList4 = BroadcastingList1
BroadcastingList5 = BroadcastingList6 = BroadcastingList1


# -- torch.jit.isinstance: container-aware isinstance for List[int], Dict[str, Tensor], ...
_RAW_NAMES = {list: "list", dict: "dict", tuple: "tuple", typing.List: "List",  # noqa: UP006
              typing.Dict: "Dict", typing.Tuple: "Tuple",  # noqa: UP006
              typing.Optional: "Optional"}


def _check_args_exist(target_type):
    name = _RAW_NAMES.get(target_type) if isinstance(target_type, typing.Hashable) else None
    if name is None:
        return
    if name in ("Dict", "dict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _warn_if_empty(obj):
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                      "in eager mode. For example, List[int] would become list and therefore "
                      "falsely return True for List[float] or List[str].", stacklevel=4)


def _matches(obj, t):
    return _container_matches(obj, t) if typing.get_origin(t) else isinstance(obj, t)


def _container_matches(obj, target_type):
    _check_args_exist(target_type)            # a bare typing.Dict has an origin, but no args
    origin = typing.get_origin(target_type)
    args = typing.get_args(target_type)
    if origin is list:
        _warn_if_empty(obj)
        return isinstance(obj, list) and all(_matches(el, args[0]) for el in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return isinstance(obj, dict) and all(
            isinstance(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _warn_if_empty(obj)
        return (isinstance(obj, tuple) and len(obj) == len(args)
                and all(_matches(el, t) for el, t in zip(obj, args)))
    if origin is typing.Union or _is_union_type(target_type):
        if obj is None:
            return type(None) in args
        return any(_matches(obj, t) for t in args if t is not type(None))
    return False


def _is_union_type(t):
    import types
    return isinstance(t, types.UnionType)


def _isinstance(obj, target_type) -> bool:
    """``isinstance`` that also checks the element types of ``List[...]``, ``Dict[...]``,
    ``Tuple[...]`` and ``Optional[...]`` targets (a tuple of targets matches any)."""
    if isinstance(target_type, tuple):
        return any(_isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type):
        return _container_matches(obj, target_type)
    _check_args_exist(target_type)
    return isinstance(obj, target_type)


def _unwrap_optional(x):
    """``x``, asserting it is not None (TorchScript's Optional refinement)."""
    assert x is not None, "Unwrapping null optional"
    return x


# -- annotation predicates (torch.jit.annotations re-exports them)
def is_tuple(ann) -> bool:
    """Whether ``ann`` is a parameterised tuple annotation (``Tuple[int]``, ``tuple[int]``)."""
    if ann is typing.Tuple:  # noqa: UP006 (the bare typing name has no arguments)
        _check_args_exist(ann)
    return typing.get_origin(ann) is tuple


def is_list(ann) -> bool:
    """Whether ``ann`` is a parameterised list annotation."""
    if ann is typing.List:  # noqa: UP006
        _check_args_exist(ann)
    return typing.get_origin(ann) is list


def is_dict(ann) -> bool:
    """Whether ``ann`` is a parameterised dict annotation."""
    if ann is typing.Dict:  # noqa: UP006
        _check_args_exist(ann)
    return typing.get_origin(ann) is dict


def is_union(ann) -> bool:
    """Whether ``ann`` is a ``Union[...]`` (or ``X | Y``) annotation."""
    return typing.get_origin(ann) is typing.Union or _is_union_type(ann)


def is_optional(ann) -> bool:
    """Whether ``ann`` is ``Optional[X]``: a union of one type with None."""
    if ann is typing.Optional:
        _check_args_exist(ann)
    if not is_union(ann):
        return False
    args = typing.get_args(ann)
    return len(args) == 2 and type(None) in args
