"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
from collections import OrderedDict
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Container"]


def _abs_index(idx, n, kind):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class Container(Module):
    """Deprecated base kept for old code; use Sequential/ModuleList/ModuleDict."""

    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    ``Sequential(a, b)`` names them '0', '1'; ``Sequential(OrderedDict(...))`` keeps names.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = _abs_index(idx, size, "Sequential")
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module):
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        # keep the names '0'..'n-1' dense, as torch does
        items = list(self._modules.items())
        self._modules.clear()
        self._modules.update((str(i), m) for i, (_, m) in enumerate(items))

    def __len__(self):
        return len(self._modules)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        for layer in other:
            self.append(layer)
        return self

    def __mul__(self, other):
        if not isinstance(other, int) or other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for "
                             f"{type(self)}" if isinstance(other, int) else
                             f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        ret = Sequential()
        for _ in range(other):
            for layer in self:
                ret.append(layer)
        return ret

    __rmul__ = __mul__

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add a module at the end. Returns the Sequential."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert a module at ``index`` (negative counts from the end), renumbering those after
        it."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))
        return self

    def extend(self, sequential):
        """Append each module of an iterable. Returns the Sequential."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        """Remove the module at ``key`` (index or slice) and return it."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self), "ModuleList")))
        modules = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def __repr__(self):
        # consecutive identical children print once, as "(0-2): 3 x Linear(...)"
        list_of_reprs = [repr(item) for item in self]
        if not list_of_reprs:
            return self._get_name() + "()"
        start_end_indices = [[0, 0]]
        repeated_blocks = [list_of_reprs[0]]
        for i, r in enumerate(list_of_reprs[1:], 1):
            if r == repeated_blocks[-1]:
                start_end_indices[-1][1] += 1
                continue
            start_end_indices.append([i, i])
            repeated_blocks.append(r)
        lines = []
        main_str = self._get_name() + "("
        for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
            local_repr = f"({start_id}): {b}"
            if start_id != end_id:
                n = end_id - start_id + 1
                local_repr = f"({start_id}-{end_id}): {n} x {b}"
            lines.append(_addindent(local_repr, 2))
        main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def insert(self, index, module):
        """Insert a module before ``index``, renumbering those after it."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """Add a module at the end. Returns the list."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove the module at ``key`` (index or slice) and return it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Append each module of an iterable. Returns the list."""
        if isinstance(modules, (Tensor, str)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " +
                            type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of modules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove the module under ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """``(key, module)`` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules):
        """Add or replace modules from a mapping or an iterable of ``(key, module)`` pairs."""
        if isinstance(modules, (OrderedDict, ModuleDict, dict)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if len(m) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                     f"{len(m)}; 2 is required")
                self[m[0]] = m[1]


def _param_summary(p):
    size_str = "x".join(str(s) for s in p.size())
    kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor"
    return f"{kind}: [{p.dtype} of size {size_str}]"


class ParameterList(Module):
    """A list of parameters (plain tensors become Parameters), registered on the module."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        return str(_abs_index(idx, len(self), "ParameterList"))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(len(self))[idx]:
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param):
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        return setattr(self, idx, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add a value at the end (a plain tensor becomes a Parameter). Returns the list."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """Append each value of an iterable. Returns the list."""
        if isinstance(values, Tensor) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " +
                            type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                lines.append(f"  ({k}): {_param_summary(p)}")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors become Parameters)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        """The value under ``key``, after storing ``default`` there if the key is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """Remove every entry."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        """Remove the entry under ``key`` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Remove and return the most recently inserted ``(key, value)`` pair."""
        k = next(reversed(list(self._keys)))
        return k, self.pop(k)

    def get(self, key, default=None):
        """The value under ``key``, or ``default`` when absent."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each of ``keys`` mapped to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """``(key, value)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Add or replace entries from a mapping or an iterable of ``(key, value)`` pairs (a plain
        dict is taken in sorted key order, as torch does)."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, dict):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size_str = "x".join(str(s) for s in p.size())
                kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind}: [{p.type()} of size {size_str}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other):
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other):
        self.update(other)
        return self
