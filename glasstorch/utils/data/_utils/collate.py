"""``default_collate`` (samples -> batched tensors) and ``default_convert`` (arrays -> tensors).

Dispatch is by the type of the batch's first element through ``default_collate_fn_map``, like
torch's ``collate``; pass your own ``collate_fn_map`` to ``collate`` to extend it.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ...._tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def _torch():
    import glasstorch
    return glasstorch


def default_convert(data):
    """Convert NumPy arrays/scalars inside ``data`` (recursively) to tensors; no batching."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return _torch().as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(v) for k, v in data.items()})
                return clone
            return elem_type({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples: leaves by ``collate_fn_map`` (type -> fn(batch, *,
    collate_fn_map)), containers (mappings, namedtuples, sequences) recursively."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                    for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map)
                              for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack tensors along a new first dimension. Inside a DataLoader worker the result is
    written straight into a shared-memory segment, so it reaches the main process without
    being pickled or copied again."""
    from . import worker
    if worker._shm_prefix is not None:
        out = worker._stack_into_shared(batch)
        if out is not None:
            return out
    return _torch().stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    as_tensor = _torch().as_tensor
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _torch().as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    torch = _torch()
    return torch.tensor(batch, dtype=torch.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _torch().tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    (np.ndarray, np.memmap): collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    (str, bytes): collate_str_fn,
}


def default_collate(batch):
    """Batch a list of samples the way torch does: tensors are stacked, NumPy arrays and
    scalars become tensors, Python ints -> int64, floats -> float64, bools -> bool, strings
    stay lists, and dicts/lists/tuples/namedtuples are collated field by field (tuples come
    back as lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
