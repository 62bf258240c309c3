"""weights_only=True refuses every global outside the allow-list, before anything runs.

Each payload, unpickled by plain ``pickle.loads``, creates a sentinel file (checked,
so the payloads are real); glasstorch.load must raise UnpicklingError naming the
global and leave no sentinel behind.
"""

import collections
import io
import pickle
import zipfile

import pytest

import glasstorch as gt
from glasstorch import serialization
from glasstorch.serialization import load, save


def _s(text):
    return f"S'{text}'\n".encode()


def _payloads(sentinel):
    cmd = f"touch {sentinel}"
    code = f"open({str(sentinel)!r}, 'w').close()"
    return {
        "reduce_os_system": (b"cos\nsystem\n(" + _s(cmd) + b"tR.", "os.system"),
        "reduce_posix_system": (b"cposix\nsystem\n(" + _s(cmd) + b"tR.", "posix.system"),
        "eval": (b"c__builtin__\neval\n(" + _s(code) + b"tR.", "eval"),
        "exec": (b"cbuiltins\nexec\n(" + _s(code) + b"tR.", "exec"),
        "subprocess_popen": (b"csubprocess\nPopen\n((" + _s("touch") + _s(str(sentinel))
                             + b"ltR.", "subprocess.Popen"),
        "inst_opcode": (b"(" + _s(cmd) + b"ios\nsystem\n.", "os.system"),
        "obj_opcode": (b"(cos\nsystem\n" + _s(cmd) + b"o.", "os.system"),
        "newobj_opcode": (b"\x80\x02csubprocess\nPopen\n(" + b"(" + _s("touch")
                          + _s(str(sentinel)) + b"lt\x81.", "subprocess.Popen"),
        "stack_global": (b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c" + bytes([len(cmd)])
                         + cmd.encode() + b"\x85R.", "os.system"),
        "build_setstate": (b"ccollections\nOrderedDict\n)Rcos\nsystem\n(" + _s(cmd)
                           + b"tRb.", "os.system"),
        "nested_dict": (b"}(S'model'\n}(S'w'\n]cos\nsystem\n(" + _s(cmd) + b"tRauu.",
                        "os.system"),
        "nested_list_in_tuple": (b"(I1\n(cbuiltins\nexec\n(" + _s(code) + b"tRlt.", "exec"),
        "getattr_trick": (b"cbuiltins\ngetattr\n(cos\nsystem\nS'__call__'\ntR(" + _s(cmd)
                          + b"tR.", "getattr"),
    }


def _short(text):
    return b"\x8c" + bytes([len(text)]) + text.encode()


def _no_side_effect_payloads():
    return {
        # dotted names must not walk attributes of allowed globals
        "dotted_name": (b"\x80\x04" + _short("torch._utils")
                        + _short("_rebuild_tensor_v2.__globals__") + b"\x93.",
                        "_rebuild_tensor_v2.__globals__"),
        "codecs_other_encoding": (b"c_codecs\nencode\n(S'x'\nS'rot13'\ntR.", None),
        "import_module": (b"cimportlib\nimport_module\n(S'os'\ntR.", "importlib.import_module"),
        "torch_hub_load": (b"ctorch.hub\nload\n(S'x'\ntR.", "torch.hub.load"),
    }


def _zip_checkpoint(payload):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def _legacy_checkpoint(payload):
    head = b"".join(pickle.dumps(x, protocol=2) for x in (
        0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True}))
    return head + payload + pickle.dumps([], protocol=2)


@pytest.mark.parametrize("wrap", [_zip_checkpoint, _legacy_checkpoint])
@pytest.mark.parametrize("name", sorted(_payloads("x")))
def test_malicious_payload_refused(tmp_path, name, wrap):
    sentinel = tmp_path / "pwned"
    payload, culprit = _payloads(sentinel)[name]
    with pytest.raises(pickle.UnpicklingError, match=culprit):
        load(io.BytesIO(wrap(payload)))
    path = tmp_path / "evil.pt"
    path.write_bytes(wrap(payload))
    with pytest.raises(pickle.UnpicklingError, match=culprit):
        load(path)
    assert not sentinel.exists()
    # control: the same bytes do run under an unrestricted unpickler
    if name != "newobj_opcode":  # NEWOBJ only allocates, it does not run __init__
        try:
            pickle.loads(payload)
        except Exception:
            pass
        import time
        for _ in range(100):  # Popen/system may finish a moment later
            if sentinel.exists():
                break
            time.sleep(0.02)
        assert sentinel.exists(), f"payload {name} is not effective"


@pytest.mark.parametrize("name", sorted(_no_side_effect_payloads()))
def test_other_refusals(name):
    payload, culprit = _no_side_effect_payloads()[name]
    with pytest.raises(pickle.UnpicklingError, match=culprit):
        load(io.BytesIO(_zip_checkpoint(payload)))


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


def test_allow_list_is_extendable(tmp_path):
    path = tmp_path / "p.pt"
    save({"p": Point(3), "t": gt.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Point"):
        load(path)
    with serialization.safe_globals([Point]):
        assert Point in serialization.get_safe_globals()
        assert load(path)["p"] == Point(3)
    assert Point not in serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        load(path)
    serialization.add_safe_globals([Point])
    try:
        assert load(path)["p"] == Point(3)
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    assert load(path, weights_only=False)["p"] == Point(3)


def test_allowed_globals_validate_arguments():
    # _rebuild_tensor_v2 with a non-storage must not be usable as a generic gadget
    payload = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(S'x'\nK\x00)))\x89"
               b"ccollections\nOrderedDict\n)Rtr.")
    with pytest.raises(pickle.UnpicklingError):
        load(io.BytesIO(_zip_checkpoint(payload)))


def test_plain_containers_and_primitives_pass():
    obj = {"a": [1, 2.5, None, True, "s", b"b", (1, 2)], "o": collections.OrderedDict(x=1),
           "s": {1, 2}, "f": frozenset({3}), "c": 1 + 2j, "big": 2 ** 70}
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    assert load(buf) == obj
