"""How a DTensor's values lie on one mesh dimension: ``Shard(dim)`` (split along ``dim`` as
``Tensor.chunk`` splits), ``Replicate()`` (whole on every rank) or ``Partial(op)`` (every
rank holds a term; the value is their reduction)."""

from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """Base class of the placements."""

    def is_shard(self, dim=None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op=None) -> bool:
        return isinstance(self, Partial) and (reduce_op is None
                                              or self.reduce_op == reduce_op)


class Shard(Placement):
    """Split along tensor dimension ``dim``: coordinate ``c`` of ``k`` holds the ``c``-th
    chunk of ``ceil(n / k)`` (the last ones smaller or empty)."""

    def __init__(self, dim: int):
        self.dim = dim

    def __eq__(self, other):
        return isinstance(other, Shard) and self.dim == other.dim

    def __hash__(self):
        return hash(("shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Each rank holds a term; the value is their ``reduce_op`` ("sum", "avg", "max",
    "min")."""

    def __init__(self, reduce_op: str = "sum"):
        if reduce_op not in ("sum", "avg", "max", "min"):
            raise ValueError(f"Partial: unsupported reduce_op {reduce_op!r} (glasstorch has "
                             f"'sum', 'avg', 'max', 'min')")
        self.reduce_op = reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and self.reduce_op == other.reduce_op

    def __hash__(self):
        return hash(("partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"
