"""What the ecosystem programs share: the case registry and the run context.

Programs import ``torch`` themselves; by the time a program module is imported the runner has
already decided whether ``torch`` is the real one or glasstorch. Nothing here imports torch at
module level, so this file works under either.
"""

import os
import zlib

import numpy as np

CASES = []


def case(fn):
    """Register ``fn(ctx) -> dict`` as one case of the program being imported."""
    CASES.append(fn)
    return fn


class Context:
    """Where a case finds its fixtures and scratch space, and whether it is recording.

    Recording (real torch only) saves the weights a case builds; replaying loads them, so both
    backends start every case from the very same numbers.
    """

    def __init__(self, fixtures, scratch, recording):
        self.fixtures = fixtures
        self.scratch = scratch
        self.recording = recording
        self._saved = set()

    def path(self, name):
        """A fixture file of this library."""
        return os.path.join(self.fixtures, name)

    def tmpdir(self, name):
        """A fresh scratch folder for one case (checkpoints, saved states)."""
        path = os.path.join(self.scratch, name)
        os.makedirs(path, exist_ok=True)
        return path

    def weights(self, model, name):
        """Give ``model`` the recorded state_dict ``<name>.pt`` (saving it first when recording).

        The file is written by real torch's ``torch.save`` and read back with ``torch.load``:
        under glasstorch that is the serialization interop every user moving weights relies on.
        """
        import torch

        path = self.path(name + ".pt")
        if self.recording and name not in self._saved:
            # cases sharing a name share the weights the first one saved
            os.makedirs(self.fixtures, exist_ok=True)
            torch.save(model.state_dict(), path)
            self._saved.add(name)
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
        return model


def fill(model, seed=0):
    """Overwrite every floating parameter and buffer of ``model`` with seeded NumPy numbers.

    For models whose weights would make fixtures too large (timm's resnet18 has 11M
    parameters): each tensor gets a stream seeded by its name, scaled like a sensible init, so
    the numbers are the same on both backends without storing them.
    """
    import torch

    with torch.no_grad():
        for name, t in list(model.state_dict(keep_vars=True).items()):
            if not t.is_floating_point():
                continue
            rng = np.random.default_rng(zlib.crc32(name.encode()) + seed)
            shape = tuple(t.shape)
            noise = rng.standard_normal(shape).astype(np.float32)
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "running_var":
                arr = 1.0 + 0.1 * np.abs(noise)
            elif t.dim() >= 2:
                fan_in = int(np.prod(shape[1:]))
                arr = noise / np.sqrt(fan_in)
            elif leaf == "weight" or leaf.startswith("gamma") or leaf == "scale":
                arr = 1.0 + 0.1 * noise
            else:
                arr = 0.1 * noise
            t.copy_(torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)))
    return model


def randn(seed, *shape):
    """Seeded standard-normal float32 inputs (NumPy, so both backends see the same numbers)."""
    import torch

    arr = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.from_numpy(arr)


def randint(seed, high, *shape):
    """Seeded int64 inputs in ``[0, high)``."""
    import torch

    arr = np.random.default_rng(seed).integers(0, high, size=shape).astype(np.int64)
    return torch.from_numpy(arr)


def sample(t, limit=2048):
    """``t`` itself when small; else ``limit`` evenly strided elements of it, flattened.

    Keeps fixtures small while still comparing numbers from the whole tensor.
    """
    flat = t.detach().reshape(-1)
    if flat.numel() <= limit:
        return t
    step = flat.numel() // limit
    return flat[::step][:limit]


def grads(model, *names):
    """``{"grad.<name>": gradient}`` for the named parameters (large ones sampled).

    A parameter whose grad is None gets no key, which the comparison reports as missing.
    """
    params = dict(model.named_parameters())
    out = {}
    for name in names:
        g = params[name].grad
        if g is not None:
            out["grad." + name] = sample(g)
            out["gradnorm." + name] = g.norm()
    return out
