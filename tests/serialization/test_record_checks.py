"""Zip-level checks on checkpoints, as torch's reader makes them: record sizes against the
storage sizes data.pkl declares (before reading), bounded inflation, one archive folder."""

import io
import pickle
import warnings
import zipfile

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _entries(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        return [(n, z.read(n)) for n in z.namelist()]


def _zip(entries, compression=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names
        with zipfile.ZipFile(out, "w", compression=compression) as z:
            for name, data in entries:
                z.writestr(name, data)
    return out.getvalue()


def _loads(lib, data):
    try:
        return lib.load(io.BytesIO(data)), None
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return None, e


def _with_record(extra, compression=zipfile.ZIP_STORED):
    entries = _entries(torch.zeros(15))
    return _zip([(n, d + b"\0" * extra if extra > 0 else d[:extra] if extra else d)
                 if n.endswith("data/0") else (n, d) for n, d in entries], compression)


@pytest.mark.parametrize("extra", [3, -4, 68])
def test_a_record_of_the_wrong_size_is_refused_like_torch(extra):
    data = _with_record(extra)
    for lib in (torch, gt):
        value, err = _loads(lib, data)
        assert isinstance(err, RuntimeError) and "record size" in str(err), (lib, err)


def test_deflated_records_load_and_a_bomb_stops_at_the_declared_size():
    assert gt.load(io.BytesIO(_with_record(0, zipfile.ZIP_DEFLATED))).tolist() == [0.0] * 15
    # a record that inflates to 64 MiB for 60 declared bytes: patch the directory's size
    entries = _entries(torch.zeros(15))
    bomb = _zip([(n, b"\0" * (64 << 20)) if n.endswith("data/0") else (n, d)
                 for n, d in entries], zipfile.ZIP_DEFLATED)
    assert len(bomb) < 1 << 20
    value, err = _loads(gt, bomb)
    assert isinstance(err, RuntimeError) and "record size" in str(err)


def test_entries_outside_the_archive_folder_are_refused_like_torch():
    for bad in ("../evil", "/abs", "other/data/0"):
        data = _zip(_entries(torch.ones(2)) + [(bad, b"x")])
        for lib in (torch, gt):
            value, err = _loads(lib, data)
            assert isinstance(err, RuntimeError) and "not in a subdirectory" in str(err), (
                lib, bad, err)


def test_a_duplicated_entry_is_refused():
    # torch's reader picks one of two same-named entries by the order its sorted directory
    # search happens to meet them (the first here, the last in other archives): a file that
    # two readers can read differently is refused rather than guessed at
    entries = _entries({"first": 1})
    dup = _zip(entries + [("archive/data.pkl", pickle.dumps({"second": 2}, 2))])
    assert torch.load(io.BytesIO(dup)) in ({"first": 1}, {"second": 2})
    with pytest.raises(RuntimeError, match="more than once"):
        gt.load(io.BytesIO(dup))


def test_pytorch_file_reader_reads_records_like_torch(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.save({"a": torch.arange(3.0), "b": torch.ones(2, dtype=torch.int64)}, path)
    t, g = torch.PyTorchFileReader(str(path)), gt.PyTorchFileReader(str(path))
    assert g.get_all_records() == t.get_all_records()
    assert g.serialization_id() == t.serialization_id()
    for name in t.get_all_records():
        assert g.get_record(name) == t.get_record(name)
        assert g.get_record_size(name) == t.get_record_size(name)
        assert g.get_record_offset(name) == t.get_record_offset(name)
    s = g.get_storage_from_record("data/0", 3, gt.float32)
    assert s.untyped_storage().nbytes() == t.get_storage_from_record(
        "data/0", 3, torch.float32).untyped_storage().nbytes() == 12
    for lib, reader in ((torch, t), (gt, g)):
        with pytest.raises(RuntimeError, match="record size"):
            reader.get_storage_from_record("data/0", 12, lib.float32)
        with pytest.raises(RuntimeError):
            reader.get_record("missing")
    assert gt._C.PyTorchFileReader is gt.PyTorchFileReader
