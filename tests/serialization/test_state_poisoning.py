"""A weights_only load can never change process-wide state: BUILD (an object's state) applies
only to new objects of allowed kinds, as torch's restricted unpickler allows. Each payload is
also refused by real torch."""

import io
import pickle
import zipfile

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _checkpoint(pkl):
    """A torch zip checkpoint whose data.pkl is ``pkl`` and which holds no storages."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def _build(module, name, state):
    """GLOBAL module name; <state>; BUILD; STOP: set ``state`` on a global object."""
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + pickle.dumps(state, 2)[2:-1] +
            b"b.")


POISON = [
    ("torch", "float32", {"itemsize": 8}),
    ("torch", "Size", ({}, {"__len__": 3})),
    ("torch._utils", "_rebuild_tensor_v2", ({}, {"__defaults__": (True,)})),
    ("collections", "OrderedDict", ({}, {"fromkeys": None})),
    ("torch", "device", {"x": 1}),
]


@pytest.mark.parametrize("module,name,state", POISON)
def test_build_on_a_global_is_refused_like_torch(module, name, state):
    data = _checkpoint(_build(module, name, state))
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)
    itemsize = gt.float32.itemsize
    with pytest.raises(pickle.UnpicklingError, match="can only build"):
        gt.load(io.BytesIO(data), weights_only=True)
    assert gt.float32.itemsize == itemsize and "x" not in vars(gt.device)
    assert gt.nn.Linear(2, 2).weight.shape == (2, 2)  # the process is unchanged


def test_build_onto_a_tensors_slots_is_refused():
    # a real tensor record, then BUILD (None, {"_data": ...}) onto the rebuilt tensor
    buf = io.BytesIO()
    gt.save(gt.zeros(3), buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        names = z.namelist()
        files = {n: z.read(n) for n in names}
    pkl_name = next(n for n in names if n.endswith("data.pkl"))
    files[pkl_name] = files[pkl_name][:-1] + pickle.dumps((None, {"_requires_grad": 5}), 2)[2:-1] \
        + b"b."
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in names:
            z.writestr(n, files[n])
    with pytest.raises((pickle.UnpicklingError, TypeError)):  # torch: set_() refuses the state
        torch.load(io.BytesIO(out.getvalue()), weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="can only build"):
        gt.load(io.BytesIO(out.getvalue()), weights_only=True)


def test_legitimate_state_still_loads():
    # a state_dict's OrderedDict carries _metadata through BUILD, in files of both libraries
    for lib in (torch, gt):
        buf = io.BytesIO()
        lib.save(lib.nn.Linear(2, 3).state_dict(), buf)
        sd = gt.load(io.BytesIO(buf.getvalue()))
        assert list(sd) == ["weight", "bias"] and hasattr(sd, "_metadata")


class Allowed:
    pass


def test_allowlisted_class_instances_take_state():
    buf = io.BytesIO()
    a = Allowed()
    a.x = gt.ones(2)
    gt.save(a, buf)
    with gt.serialization.safe_globals([Allowed]):
        b = gt.load(io.BytesIO(buf.getvalue()))
    assert type(b) is Allowed and b.x.tolist() == [1.0, 1.0]
    assert not hasattr(Allowed, "x")


def test_full_load_does_not_walk_into_other_modules():
    # weights_only=False: torch's lookup of this name fails, so must ours (protocol 2)
    data = _checkpoint(b"\x80\x02ctorch\nserialization.os.system\n.")
    with pytest.raises(AttributeError, match="Can't get attribute"):
        torch.load(io.BytesIO(data), weights_only=False)
    with pytest.raises(pickle.UnpicklingError):
        gt.load(io.BytesIO(data), weights_only=False)
    proto4 = _checkpoint(b"\x80\x04\x8c\x05torch\x8c\x17serialization.os.system\x93.")
    with pytest.raises(pickle.UnpicklingError):
        gt.load(io.BytesIO(proto4), weights_only=False)
