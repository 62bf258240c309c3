"""Tensor printing (repr/str) in torch's layout."""

from __future__ import annotations


def tensor_repr(t):
    return f"tensor({t._data.tolist()})"
