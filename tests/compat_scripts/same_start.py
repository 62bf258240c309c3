"""Run an unmodified script so that torch and glasstorch compute the same numbers.

The two libraries draw different random streams, so a script's weight init, dropout masks and
shuffling differ between them. Under ``same_start(torch)``:
- a root module's parameters are redrawn from NumPy (seeded by name and shape) on the first
  call of a module of that class, so both libraries start from the same weights (a model
  reloaded later from a checkpoint is of a class already seen and keeps its weights);
- dropout probabilities are set to 0;
- ``RandomSampler`` (``shuffle=True``) and ``random_split`` draw their permutations from NumPy.
Everything else the script does runs as written.

Usage: ``python -m glasstorch run same_start.py script.py [args...]``, or in a process where
torch is imported, ``with same_start(torch): runpy.run_path(script)``.
"""
import contextlib
import os
import runpy
import sys
import zlib

import numpy as np


def _redraw(torch, module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            rng = np.random.RandomState(zlib.crc32(f"{name}{tuple(p.shape)}".encode()))
            bound = 1.0 / np.sqrt(p[0].numel()) if p.dim() >= 2 else 0.1
            values = rng.uniform(-bound, bound, size=tuple(p.shape))
            if p.dim() == 1 and name.endswith("weight"):
                values += 1.0  # a norm layer's gain: near 1, as its own init has it
            p.copy_(torch.from_numpy(values.astype(np.float32)))


def _no_dropout(torch, module):
    nn = torch.nn
    for m in module.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)):
            m.p = 0.0
        elif isinstance(m, (nn.MultiheadAttention, nn.RNNBase)):
            m.dropout = 0.0


def _split_lengths(n, lengths):
    if sum(lengths) == n:
        return list(lengths)
    counts = [int(np.floor(n * f)) for f in lengths]  # fractions, as torch rounds them
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    return counts


@contextlib.contextmanager
def same_start(torch):
    """Patch ``torch`` (either library) for the duration of the block; see the module doc."""
    data = torch.utils.data
    Module = torch.nn.Module
    seen_classes, depth = set(), [0]
    permutations = np.random.RandomState(123)
    saved = (Module.__call__, data.RandomSampler.__iter__, data.random_split,
             data.dataset.random_split)
    original_call = Module.__call__

    def call(self, *args, **kwargs):
        if depth[0] == 0 and type(self) not in seen_classes:
            seen_classes.add(type(self))
            _redraw(torch, self)
            _no_dropout(torch, self)
        depth[0] += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    def sampler_iter(self):
        return iter(permutations.permutation(len(self.data_source)).tolist())

    def random_split(dataset, lengths, generator=None):
        order = np.random.RandomState(7).permutation(len(dataset)).tolist()
        subsets, start = [], 0
        for k in _split_lengths(len(dataset), lengths):
            subsets.append(data.Subset(dataset, order[start:start + k]))
            start += k
        return subsets

    Module.__call__, data.RandomSampler.__iter__ = call, sampler_iter
    data.random_split = data.dataset.random_split = random_split
    try:
        yield
    finally:
        (Module.__call__, data.RandomSampler.__iter__, data.random_split,
         data.dataset.random_split) = saved


if __name__ == "__main__":
    import torch
    import torch.utils.data.dataset  # noqa: F401  (same_start patches it)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    with same_start(torch):
        runpy.run_path(script, run_name="__main__")
