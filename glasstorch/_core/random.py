"""Random number generators: ``Generator`` over NumPy's PCG64, and the default generator.

Streams are reproducible for a seed but are not bit-identical to torch's Mersenne Twister.
A generator's state is its PCG64 state plus its initial seed, packed into a uint8 tensor
so it round-trips through ``get_state``/``set_state`` exactly.
"""

from __future__ import annotations

import os

import numpy as np

from .device import as_device

__all__ = ["Generator", "default_generator"]

# torch's default CPU generator starts from this seed, so initial_seed() matches.
_DEFAULT_SEED = 67280421310721
_U64 = 1 << 64
_MASK128 = (1 << 128) - 1
_STATE_BYTES = 16 + 16 + 1 + 4 + 8   # PCG64 state, increment, cached uint32 flag+value, seed


class Generator:
    """A CPU random number generator (``torch.Generator``)."""

    __slots__ = ("_bitgen", "np", "_seed", "_device")

    def __init__(self, device="cpu"):
        self._device = as_device(device)
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        """The generator's device (always the CPU)."""
        return self._device

    def manual_seed(self, seed):
        """Reseed from ``seed`` (any 64-bit integer, negatives wrap); returns ``self``."""
        seed = int(seed)
        if not -(1 << 63) <= seed < _U64:
            raise ValueError(f"Overflow when unpacking long long: seed {seed} is outside "
                               f"[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]")
        seed %= _U64
        self._seed = seed
        self._bitgen = np.random.PCG64(seed)
        # ``np`` is the NumPy Generator the sampling ops draw from.
        self.np = np.random.Generator(self._bitgen)
        return self

    def seed(self):
        """Reseed from OS entropy and return the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The full state as a 1-D uint8 tensor (pass it to ``set_state`` to restore)."""
        from .._tensor import _wrap
        st = self._bitgen.state
        raw = (st["state"]["state"].to_bytes(16, "little") +
               st["state"]["inc"].to_bytes(16, "little") +
               bytes([st["has_uint32"]]) + int(st["uinteger"]).to_bytes(4, "little") +
               self._seed.to_bytes(8, "little"))
        return _wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state returned by ``get_state``; returns ``self``."""
        from .._tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._data).reshape(-1).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPU generator state of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        state = int.from_bytes(raw[0:16], "little")
        inc = int.from_bytes(raw[16:32], "little")
        if not inc & 1:
            raise RuntimeError("Invalid RNG state: the PCG64 increment must be odd")
        self._bitgen.state = {
            "bit_generator": "PCG64",
            "state": {"state": state & _MASK128, "inc": inc},
            "has_uint32": raw[32] & 1,
            "uinteger": int.from_bytes(raw[33:37], "little"),
        }
        self._seed = int.from_bytes(raw[37:45], "little")
        return self

    def clone_state(self):
        """A new Generator in the same state (its stream continues identically)."""
        g = Generator()
        g.set_state(self.get_state())
        return g

    def __repr__(self):
        return f"<glasstorch.Generator object at {hex(id(self))}>"


default_generator = Generator()
