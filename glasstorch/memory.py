"""Memory accounting over glasstorch tensor storages, with ``torch.cuda``'s names.

A storage is the NumPy array that owns a tensor's memory (the root of the ``.base``
chain); its size is ``.nbytes``. While tracking is on, every tensor glasstorch builds
reports its storage once; a weak reference with a callback notices when the storage is
freed. Tracking starts on the first call to any function here (or ``enable()``), seeded
with every tensor alive at that moment (found through ``gc``), and costs one ``is None``
check per tensor creation while off. ``memory_summary()`` attributes the live storages to
what holds them (parameters, gradients, optimizer state, tensors saved for backward,
other tensors), looking them up through ``gc`` at summary time.
"""

from __future__ import annotations

import gc
import weakref

from . import _tensor
from ._core.backend import xp

__all__ = [
    "enable", "disable", "is_enabled", "memory_allocated", "max_memory_allocated",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_accumulated_memory_stats",
    "memory_stats", "memory_snapshot", "memory_summary", "memory_breakdown",
    "memory_reserved", "max_memory_reserved", "CATEGORIES",
]

CATEGORIES = ("parameters", "gradients", "optimizer state", "saved for backward", "other")
_UNATTRIBUTED = "unattributed"

_ndarray = xp.ndarray
_live: dict = {}  # id(root) -> (weakref to root, nbytes)
# [current bytes, peak bytes, bytes allocated (cumulative), bytes freed,
#  current count, peak count, allocations (cumulative), frees]
_c = [0, 0, 0, 0, 0, 0, 0, 0]
_category_peak: dict = {}


def _freed(key, n):
    if _live.pop(key, None) is not None:
        c = _c
        c[0] -= n
        c[3] += n
        c[4] -= 1
        c[7] += 1


def _track(arr):
    """Allocation hook: register ``arr``'s storage if it is new."""
    base = arr.base
    while isinstance(base, _ndarray):
        arr, base = base, base.base
    key = id(arr)
    if key in _live:
        return
    n = arr.nbytes
    # The callback fires before the array's memory (and so its id) is released.
    _live[key] = (weakref.ref(arr, lambda _r, k=key, n=n: _freed(k, n)), n)
    c = _c
    c[0] += n
    c[2] += n
    c[4] += 1
    c[6] += 1
    if c[0] > c[1]:
        c[1] = c[0]
    if c[4] > c[5]:
        c[5] = c[4]


def is_enabled() -> bool:
    """Whether storages are being tracked."""
    return _tensor.alloc_hook[0] is not None


def enable():
    """Start tracking (a no-op when on), counting every tensor alive now."""
    if _tensor.alloc_hook[0] is not None:
        return
    _tensor.alloc_hook[0] = _track
    for t in _live_tensors():
        _track(t._data)


def disable():
    """Stop tracking and forget every count (the per-tensor cost drops back to one check)."""
    _tensor.alloc_hook[0] = None
    _live.clear()
    _c[:] = [0] * 8
    _category_peak.clear()


def _live_tensors():
    Tensor = _tensor.Tensor
    return [o for o in gc.get_objects() if issubclass(type(o), Tensor) and hasattr(o, "_data")]


def memory_allocated(device=None) -> int:
    """Bytes held by live tensor storages."""
    enable()
    return _c[0]


def max_memory_allocated(device=None) -> int:
    """Peak of ``memory_allocated()`` since tracking started or the last reset."""
    enable()
    return _c[1]


# There is no caching allocator: reserved memory is allocated memory.
memory_reserved = memory_allocated
max_memory_reserved = max_memory_allocated


def reset_peak_memory_stats(device=None):
    """Restart the peak counters (and per-category peaks) from the current values."""
    enable()
    _c[1] = _c[0]
    _c[5] = _c[4]
    _category_peak.clear()


reset_max_memory_allocated = reset_peak_memory_stats


def reset_accumulated_memory_stats(device=None):
    """Zero the cumulative allocated/freed counters."""
    enable()
    _c[2] = _c[3] = _c[6] = _c[7] = 0


def memory_stats(device=None) -> dict:
    """torch.cuda.memory_stats-style flat dict (keys sorted, as torch returns them)."""
    enable()
    c = _c
    stats = {"num_alloc_retries": 0, "num_ooms": 0}
    for prefix in ("allocated_bytes.all.", "active_bytes.all.", "reserved_bytes.all."):
        stats.update({prefix + "current": c[0], prefix + "peak": c[1],
                      prefix + "allocated": c[2], prefix + "freed": c[3]})
    for prefix in ("allocation.all.", "active.all.", "segment.all."):
        stats.update({prefix + "current": c[4], prefix + "peak": c[5],
                      prefix + "allocated": c[6], prefix + "freed": c[7]})
    return dict(sorted(stats.items()))


# ---------------------------------------------------------------------------- attribution
def _root(arr):
    base = arr.base
    while isinstance(base, _ndarray):
        arr, base = base, base.base
    return arr


def _attribute():
    """{id(root): (category, root)} for every storage a live object holds, by priority:
    parameters > gradients > optimizer state > saved for backward > other."""
    from .autograd.graph import Node, SavedTensor
    from .nn.parameter import Parameter
    from .optim.optimizer import Optimizer

    Tensor = _tensor.Tensor
    tensors, saved, optimizers, nodes = [], [], [], []
    for o in gc.get_objects():
        if issubclass(type(o), Tensor):
            tensors.append(o)
        elif type(o) is SavedTensor:
            saved.append(o)
        elif issubclass(type(o), Node):
            nodes.append(o)
        elif issubclass(type(o), Optimizer):
            optimizers.append(o)
    owner: dict = {}

    def claim(arr, cat):
        if isinstance(arr, Tensor):
            arr = getattr(arr, "_data", None)
        if isinstance(arr, _ndarray):
            r = _root(arr)
            owner.setdefault(id(r), (cat, r))

    params = [t for t in tensors if isinstance(t, Parameter)]
    for p in params:
        claim(p, "parameters")
    for p in params:
        if p._grad is not None:
            claim(p._grad, "gradients")
    for opt in optimizers:
        for st in getattr(opt, "state", {}).values():
            if isinstance(st, dict):
                for v in st.values():
                    claim(v, "optimizer state")
    for s in saved:
        claim(s._tensor, "saved for backward")
    # Nodes may also keep raw arrays or tensors directly in their saved dict.
    for n in nodes:
        d = n._saved
        if d:
            for v in d.values():
                if not isinstance(v, SavedTensor):
                    claim(v, "saved for backward")
    for t in tensors:
        claim(t, "other")
    return owner


def memory_breakdown(device=None) -> dict:
    """Current bytes per category (``CATEGORIES``), plus ``"unattributed"`` for tracked
    storages no live tensor refers to any more (an array held directly by some object).
    The values sum to ``memory_allocated()``."""
    enable()
    owner = _attribute()
    for key, (_, r) in owner.items():  # storages built outside glasstorch's constructors
        if key not in _live:
            _track(r)
    out = dict.fromkeys(CATEGORIES, 0)
    out[_UNATTRIBUTED] = 0
    for key, (_, n) in list(_live.items()):
        out[owner[key][0] if key in owner else _UNATTRIBUTED] += n
    for k, v in out.items():
        if v > _category_peak.get(k, 0):
            _category_peak[k] = v
    return out


def memory_snapshot() -> list:
    """One segment dict per live storage (torch.cuda.memory_snapshot's layout), with the
    holder's category added."""
    enable()
    owner = _attribute()
    segs = []
    for key, (ref, n) in list(_live.items()):
        r = ref()
        if r is None:
            continue
        addr = r.__array_interface__["data"][0]
        segs.append({
            "device": "cpu", "address": addr, "total_size": n, "allocated_size": n,
            "active_size": n, "requested_size": n,
            "segment_type": "large" if n > 1 << 20 else "small",
            "category": owner[key][0] if key in owner else _UNATTRIBUTED,
            "dtype": str(r.dtype), "shape": tuple(r.shape),
            "blocks": [{"address": addr, "size": n, "requested_size": n,
                        "state": "active_allocated"}],
        })
    return segs


def _fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device=None, abbreviated=False) -> str:
    """A table of live tensor memory by holder: current bytes, share, and the peak each
    category reached among breakdowns taken since the last reset; totals with the exact
    tracked peak."""
    b = memory_breakdown()
    total = _c[0]
    lines = ["=" * 72, " glasstorch memory summary (tensor storages, CPU)", "-" * 72,
             f" {'held by':<22}{'current':>16}{'share':>10}{'peak seen':>16}", "-" * 72]
    for cat, n in b.items():
        if cat == _UNATTRIBUTED and n == 0:
            continue
        share = 100.0 * n / total if total else 0.0
        lines.append(f" {cat:<22}{_fmt(n):>16}{share:>9.1f}%{_fmt(_category_peak.get(cat, 0)):>16}")
    lines += ["-" * 72,
              f" {'total':<22}{_fmt(total):>16}{'':>10}{_fmt(_c[1]):>16}",
              f" live storages: {_c[4]} (peak {_c[5]}); allocated since reset: "
              f"{_fmt(_c[2])} in {_c[6]} storages, freed {_fmt(_c[3])}",
              " 'peak seen' per category is the largest value at a summary since the last",
              " reset; the total's peak is exact.", "=" * 72]
    return "\n".join(lines)
