"""Which torch glasstorch says it is: ``torch.__version__`` (a TorchVersion), ``torch.version``,
``importlib.metadata`` while glasstorch serves torch, and the metadata-only distributions that
``python -m glasstorch provide-torch-metadata`` writes for pip."""
import base64
import csv
import hashlib
import importlib.metadata
import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

import glasstorch
from glasstorch.__main__ import main
from glasstorch.torch_version import InvalidVersion, TorchVersion, Version

torch = pytest.importorskip("torch")
from torch.torch_version import TorchVersion as RealTorchVersion  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VERSIONS = ["2.13.0+cpu", "2.13.0", "1.10.0a", "2.0.0rc1", "2.1.0.dev20230101", "parrot",
            "0.28.0+cu130", "v2.13"]
OTHERS = ["2.13.0+cpu", "2.13.0", "2.13", "2.13.00+cpu", "V2.13.0+CPU", "2.6", "2.9.1", "10.0",
          "2.13.0rc1", "2.13.0.post1", "2.13.0.dev1", "2.13.0+cpu.1", "2.13.0+abc", "parrot",
          "", "1!0.1", (2, 0), (2, 13), (2, 13, 0), (2, 14), [2, 13, 1], (2, "x"), (), 5, 2.1,
          None, b"2"]
OPS = ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]


def _outcome(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (the type is what is compared)
        return type(exc).__name__


@pytest.mark.parametrize("base", VERSIONS)
def test_torch_version_compares_as_torchs(base):
    import operator
    ours, theirs = TorchVersion(base), RealTorchVersion(base)
    for other in OTHERS:
        for op in OPS:
            fn = getattr(operator, op.strip("_"))
            got = _outcome(lambda: fn(ours, other))
            want = _outcome(lambda: fn(theirs, other))
            assert got == want, (base, op, other, got, want)
            # the reflected forms: other OP version
            got = _outcome(lambda: fn(other, ours))
            want = _outcome(lambda: fn(other, theirs))
            assert got == want, (other, op, base, got, want)


def test_torch_version_is_a_str():
    v = glasstorch.__version__
    assert isinstance(v, str) and type(v) is TorchVersion
    assert v == "2.13.0+cpu" and v.split(".") == ["2", "13", "0+cpu"]
    assert hash(v) == hash("2.13.0+cpu") and {v: 1}["2.13.0+cpu"] == 1
    assert type(v + "x") is str and repr(v) == "'2.13.0+cpu'" and f"{v}" == "2.13.0+cpu"
    assert TorchVersion.__slots__ == () and not hasattr(v, "__dict__")
    back = pickle.loads(pickle.dumps(v))
    assert type(back) is TorchVersion and back == v
    # the comparisons the libraries we run make
    assert v >= "2.6" and v > (2, 0) and v >= (2, 13) and not v >= (2, 14)
    assert Version(v).release == (2, 13, 0) and Version(v).base_version == "2.13.0"


def test_packaging_versions_compare_by_value():
    packaging_version = pytest.importorskip("packaging.version")
    v = glasstorch.__version__
    assert v >= packaging_version.Version("2.6") and v < packaging_version.Version("3")
    assert packaging_version.Version("2.0") <= v
    assert packaging_version.parse(v) == packaging_version.Version("2.13.0+cpu")


def test_version_parser_orders_like_packaging():
    packaging_version = pytest.importorskip("packaging.version")
    texts = ["1.0.dev0", "1.0a0", "1.0a1", "1.0b2.post3", "1.0rc1", "1.0", "1.0.0+abc",
             "1.0+abc.5", "1.0+5", "1.0.post1.dev2", "1.0.post1", "1.1.dev1", "1.1", "1!0.5",
             "2.13.0+cpu", "2.13.0", "2.9", "0.28.0+cu130", "1.0-1", "1.0_RC_2", "v1.2-alpha.3",
             "1.0.0.0"]
    ours = sorted(texts, key=Version)
    theirs = sorted(texts, key=packaging_version.Version)
    assert [str(Version(t)) for t in ours] == [str(packaging_version.Version(t)) for t in theirs]
    for a in texts:
        for b in texts:
            assert (Version(a) == Version(b)) == (packaging_version.Version(a)
                                                 == packaging_version.Version(b)), (a, b)
            assert (Version(a) < Version(b)) == (packaging_version.Version(a)
                                                < packaging_version.Version(b)), (a, b)
    v = Version("1!2.3.4rc5.post6.dev7+Ubuntu-1")
    p = packaging_version.Version("1!2.3.4rc5.post6.dev7+Ubuntu-1")
    for attr in ("epoch", "release", "pre", "post", "dev", "local", "public", "base_version",
                 "major", "minor", "micro", "is_prerelease"):
        want = getattr(p, attr)
        if attr == "local":
            want = tuple(int(x) if x.isdigit() else x for x in want.split("."))
        assert getattr(v, attr) == want, attr
    for bad in ["parrot", "1.0+", "1..0", "1.0-", ""]:
        with pytest.raises(InvalidVersion):
            Version(bad)
    assert issubclass(InvalidVersion, ValueError)


def test_version_module_mirrors_torch_version():
    from glasstorch import version
    assert version.__version__ == glasstorch.__version__ and type(version.__version__) is str
    for name in torch.version.__all__:
        assert hasattr(version, name), name
    assert version.cuda is None and version.hip is None and version.debug is False
    # the same release as the torch installed as the oracle, whichever build label it carries
    assert Version(version.__version__).public == Version(torch.__version__).public
    assert version.torch_spec == Version(torch.__version__).public
    assert glasstorch.torch_version.TorchVersion is TorchVersion


def test_glasstorch_own_version_matches_its_distribution():
    from glasstorch import version
    try:
        installed = importlib.metadata.version("glasstorch")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("glasstorch is not installed as a distribution here")
    assert version.glasstorch_version == installed


def test_cli_version_names_both(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(
        f"glasstorch {glasstorch.version.glasstorch_version} (serves torch 2.13.0+cpu and "
        "torchvision 0.28.0+cpu;")


SERVED_PROBE = """
import importlib.metadata as md, json, sys, tempfile
import glasstorch
glasstorch.install_as_torch()
import torch, torch.torch_version, torch.version, torchvision
out = {}
out["version"] = [torch.__version__, type(torch.__version__).__name__,
                  torch.torch_version.TorchVersion is glasstorch.torch_version.TorchVersion,
                  torch.version.__version__, torchvision.__version__]
out["md"] = [md.version("torch"), md.version("torchvision"), md.version("Torch"),
             md.version("TorchVision")]
d = md.distribution("torch")
out["dist"] = [d.metadata["Name"], d.version, d.requires, d.files, d.name,
               list(d.entry_points), d.read_text("INSTALLER")]
out["tv_requires"] = md.requires("torchvision")
pkgs = md.packages_distributions()
out["pkgs"] = [pkgs.get("torch"), pkgs.get("torchvision")]
out["all"] = sorted(x.metadata["Name"] for x in md.distributions()
                    if type(x).__name__ == "ServedDistribution")
with tempfile.TemporaryDirectory() as tmp:
    out["explicit_path"] = [x.metadata["Name"] for x in md.distributions(path=[tmp])]
try:
    md.version("glasstorch-no-such-dist")
except md.PackageNotFoundError:
    out["unknown"] = "PackageNotFoundError"
out["names"] = [torch.__name__, torch.Tensor.__module__, torch.nn.Module.__module__]
glasstorch._compat.uninstall_as_torch()
out["after"] = [type(x).__name__ for x in md.distributions(name="torch")]
json.dump(out, sys.stdout)
"""


def test_metadata_while_served():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SERVED_PROBE)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["version"] == ["2.13.0+cpu", "TorchVersion", True, "2.13.0+cpu", "0.28.0+cpu"]
    assert out["md"] == ["2.13.0+cpu", "0.28.0+cpu", "2.13.0+cpu", "0.28.0+cpu"]
    assert out["dist"] == ["torch", "2.13.0+cpu", ["glasstorch"], None, "torch", [],
                           "glasstorch\n"]
    assert out["tv_requires"] == ["glasstorch", "torch==2.13.0"]
    assert "torch" in out["pkgs"][0] and out["pkgs"][1] == ["torchvision"]
    assert out["all"] == ["torch", "torchvision"]
    assert out["explicit_path"] == []  # a search of given folders is not answered by us
    assert out["unknown"] == "PackageNotFoundError"
    # documented decision: the served module and its classes keep glasstorch's names
    assert out["names"] == ["glasstorch", "glasstorch._tensor", "glasstorch.nn.modules.module"]
    assert "ServedDistribution" not in out["after"]


def _record_ok(site, folder):
    with open(os.path.join(site, folder, "RECORD"), newline="") as f:
        rows = list(csv.reader(f))
    listed = sorted(row[0] for row in rows)
    assert listed == sorted(f"{folder}/{name}" for name in os.listdir(os.path.join(site, folder)))
    for path, digest, size in rows:
        if path.endswith("/RECORD"):
            assert digest == size == ""
            continue
        data = open(os.path.join(site, path), "rb").read()
        want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={want}" and int(size) == len(data)


def test_provide_metadata_writes_a_pip_distribution(tmp_path, capsys):
    site = str(tmp_path)
    assert main(["provide-torch-metadata", "--torchvision", "--target", site]) == 0
    assert "torch-2.13.0+cpu.dist-info" in capsys.readouterr().out
    assert sorted(os.listdir(site)) == ["torch-2.13.0+cpu.dist-info",
                                        "torchvision-0.28.0+cpu.dist-info"]
    for folder in os.listdir(site):
        _record_ok(site, folder)
    dists = {d.metadata["Name"]: d for d in importlib.metadata.distributions(path=[site])}
    assert dists["torch"].version == "2.13.0+cpu" and dists["torch"].requires == ["glasstorch"]
    assert dists["torchvision"].version == "0.28.0+cpu"
    assert dists["torchvision"].requires == ["glasstorch", "torch==2.13.0"]
    assert sorted(str(p) for p in dists["torch"].files) == [
        "torch-2.13.0+cpu.dist-info/INSTALLER", "torch-2.13.0+cpu.dist-info/METADATA",
        "torch-2.13.0+cpu.dist-info/RECORD"]
    # metadata only: nothing importable was written
    assert not any(name in ("torch", "torchvision") or name.endswith(".py")
                   for name in os.listdir(site))
    # again: rewritten in place, not duplicated
    assert main(["provide-torch-metadata", "--target", site]) == 0
    assert len(os.listdir(site)) == 2
    assert main(["provide-torch-metadata", "--remove", "--target", site]) == 0
    out = capsys.readouterr().out
    assert out.count("removed ") == 2 and os.listdir(site) == []
    assert main(["provide-torch-metadata", "--remove", "--target", site]) == 0
    assert "no glasstorch-provided torch metadata" in capsys.readouterr().out


@pytest.mark.parametrize("real", ["torch-2.12.0.dist-info", "torch", "Torch-2.0.egg-info"])
def test_provide_metadata_refuses_a_real_torch(tmp_path, capsys, real):
    site = tmp_path
    (site / real).mkdir()
    if real.endswith(".dist-info"):
        (site / real / "INSTALLER").write_text("pip\n")
    assert main(["provide-torch-metadata", "--target", str(site)]) == 1
    err = capsys.readouterr().err
    assert "a real torch is installed" in err and real in err
    assert sorted(os.listdir(site)) == [real]  # nothing written
    # --remove leaves a real installation alone
    assert main(["provide-torch-metadata", "--remove", "--target", str(site)]) == 0
    assert sorted(os.listdir(site)) == [real]


def test_provide_metadata_refuses_a_real_torchvision_only_when_asked(tmp_path, capsys):
    (tmp_path / "torchvision").mkdir()
    assert main(["provide-torch-metadata", "--torchvision", "--target", str(tmp_path)]) == 1
    assert "a real torchvision" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["torchvision"]
    assert main(["provide-torch-metadata", "--target", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["torch-2.13.0+cpu.dist-info", "torchvision"]


def test_provide_metadata_usage_errors(tmp_path, capsys):
    assert main(["provide-torch-metadata", "--target", str(tmp_path / "missing")]) == 1
    assert "is not a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["provide-torch-metadata", "--bogus"])
