"""A mutation fuzzer for torch.load: corrupts real checkpoints (bytes of the pickle, of the
records, of the zip structure) and loads each one with weights_only=True.

Every load must either succeed or raise one of the errors torch's loader raises for bad files,
and must leave the process as it was (dtypes, Size, the rebuild functions, Module building).
``python -m tests.serialization.fuzz --iterations 20000 --seed 7`` runs a long campaign; the
test suite runs a short, fixed one (``test_fuzz.py``).
"""

from __future__ import annotations

import argparse
import io
import pickle
import random
import sys
import warnings
import zipfile

import glasstorch as gt
from glasstorch import serialization as ser

# What a refused file may raise: torch raises these types for bad checkpoints.
EXPECTED = (RuntimeError, pickle.UnpicklingError, EOFError, ValueError, zipfile.BadZipFile,
            KeyError, OverflowError, UnicodeDecodeError, NotImplementedError)


def seeds():
    """Valid checkpoints of several shapes to mutate."""
    out = []
    for obj in ({"w": gt.arange(12.0).view(3, 4), "b": gt.ones(3, dtype=gt.float64)},
                gt.nn.Linear(3, 2).state_dict(),
                [gt.zeros(2, dtype=gt.int64), gt.tensor([True, False]), 3, "x", (1.5, None)],
                {"t": gt.arange(6.0)[::2], "v": gt.arange(6.0).view(2, 3).t()}):
        buf = io.BytesIO()
        gt.save(obj, buf)
        out.append(buf.getvalue())
    return out


def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def _rezip(members):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicated names are one of the mutations
        with zipfile.ZipFile(buf, "w") as z:
            for name, body in members:
                z.writestr(name, body)
    return buf.getvalue()


def _flip(body, rng):
    b = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        if not b:
            break
        i = rng.randrange(len(b))
        op = rng.random()
        if op < 0.5:
            b[i] = rng.randrange(256)
        elif op < 0.75:
            del b[i:i + rng.randint(1, 8)]
        else:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(b)


def mutate(data, rng):
    """One corrupted variant of the checkpoint ``data``."""
    kind = rng.random()
    if kind < 0.2:  # raw bytes of the whole file, or a truncation
        return data[:rng.randrange(len(data))] if rng.random() < 0.3 else _flip(data, rng)
    members = _members(data)
    i = rng.randrange(len(members))
    name, body = members[i]
    if kind < 0.7 and not name.endswith("data.pkl"):
        pkl = next(k for k, (n, _) in enumerate(members) if n.endswith("data.pkl"))
        i, (name, body) = pkl, members[pkl]
    members[i] = (name, _flip(body, rng))
    if rng.random() < 0.1:  # drop or duplicate a record
        j = rng.randrange(len(members))
        members = members[:j] + members[j + 1:] if rng.random() < 0.5 else members + [members[j]]
    return _rezip(members)


def _process_state():
    return (tuple((d, d.itemsize, d.is_floating_point) for d in gt._core.dtype.all_dtypes),
            gt.Size.__dict__.copy().keys(), ser._rebuild_tensor_v2.__defaults__,
            ser._rebuild_tensor.__defaults__, gt.float32.__dict__.copy() if hasattr(
                gt.float32, "__dict__") else None)


def run(iterations, seed):
    """Fuzz for ``iterations`` loads; return (loaded, refused) counts or raise on a defect."""
    rng = random.Random(seed)
    base = seeds()
    before = _process_state()
    loaded = refused = 0
    for k in range(iterations):
        data = mutate(rng.choice(base), rng)
        try:
            gt.load(io.BytesIO(data), weights_only=True)
            loaded += 1
        except EXPECTED:
            refused += 1
        except Exception as e:  # an unexpected type is a defect: report the reproducer
            raise AssertionError(f"iteration {k} (seed {seed}) raised {type(e).__name__}: "
                                 f"{e}; input {data[:64]!r}...") from e
    if _process_state() != before:
        raise AssertionError("a fuzzed checkpoint changed process-wide state")
    gt.nn.Linear(2, 2)
    return loaded, refused


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    loaded, refused = run(args.iterations, args.seed)
    print(f"{args.iterations} fuzzed loads: {loaded} loaded, {refused} refused cleanly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
