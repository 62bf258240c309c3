"""glasstorch.hub against torch.hub, offline: local hubconf repos, a pre-populated cache of
GitHub repos and checkpoints, file:// downloads, hash checks and cache-folder resolution.

Nothing here may reach the network: ``no_network`` makes every http(s) request fail the way an
offline machine does, so the tests behave the same with or without a connection.
"""

import hashlib
import os
import textwrap
import urllib.error
import urllib.request
import zipfile

import pytest

import glasstorch
import glasstorch.hub as hub

HUBCONF = '''
dependencies = ["os", "json"]

from helpers import scale  # a module of the repo itself: the repo folder is on sys.path


def tiny(n=3, *, factor=2):
    """Build a tiny thing: ``n`` values times ``factor``."""
    return [scale(i, factor) for i in range(n)]


def _private():
    return "hidden"


not_callable = 5
'''


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh TORCH_HOME, with set_dir's override cleared before and after (torch's too)."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.delenv("TORCH_HUB", raising=False)
    monkeypatch.delenv("TORCH_MODEL_ZOO", raising=False)
    monkeypatch.setattr(hub, "_hub_dir", None)
    try:
        import torch.hub
        monkeypatch.setattr(torch.hub, "_hub_dir", None)
    except ImportError:
        pass
    return tmp_path / "torch_home"


@pytest.fixture
def no_network(monkeypatch):
    """Network URLs fail as offline (DNS failure); file:// still works."""
    real = urllib.request.urlopen

    def offline(url, *args, **kwargs):
        full = url.full_url if isinstance(url, urllib.request.Request) else url
        if full.startswith("file:"):
            return real(url, *args, **kwargs)
        raise urllib.error.URLError(OSError(-2, "Name or service not known"))

    monkeypatch.setattr(hub, "urlopen", offline)
    try:
        import torch.hub
        monkeypatch.setattr(torch.hub, "urlopen", offline)
    except ImportError:
        pass


def _make_repo(folder, hubconf=HUBCONF):
    folder.mkdir(parents=True)
    (folder / "hubconf.py").write_text(hubconf)
    (folder / "helpers.py").write_text("def scale(x, f):\n    return x * f\n")
    return folder


# ---------------------------------------------------------------- cache folder
def test_get_dir_resolution_matches_torch(tmp_path, monkeypatch, home):
    torch = pytest.importorskip("torch")
    assert hub.get_dir() == torch.hub.get_dir() == str(home / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "user/.cache/torch/hub")
    monkeypatch.setenv("TORCH_HOME", "~/th")
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "user/th/hub")
    hub.set_dir("~/elsewhere")
    torch.hub.set_dir("~/elsewhere")
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "user/elsewhere")
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        hub.get_dir()


# ---------------------------------------------------------------- local hubconf
def test_load_local_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    repo = _make_repo(tmp_path / "repo")
    ours = hub.load(str(repo), "tiny", 4, source="local", factor=3)
    assert ours == torch.hub.load(str(repo), "tiny", 4, source="local", factor=3)
    assert ours == [0, 3, 6, 9]
    assert str(repo) not in __import__("sys").path  # the repo left sys.path again
    assert hub.load(str(repo), "tiny", source="LOCAL") == [0, 2, 4]


@pytest.mark.parametrize("model", ["nope", "not_callable"])
def test_missing_entrypoint_error_matches_torch(tmp_path, model):
    torch = pytest.importorskip("torch")
    repo = _make_repo(tmp_path / "repo")
    with pytest.raises(RuntimeError) as ours:
        hub.load(str(repo), model, source="local")
    with pytest.raises(RuntimeError) as theirs:
        torch.hub.load(str(repo), model, source="local")
    assert str(ours.value) == str(theirs.value) == f"Cannot find callable {model} in hubconf"


def test_dependencies_and_argument_errors_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    repo = _make_repo(tmp_path / "repo", HUBCONF.replace('["os", "json"]',
                                                          '["os", "no_such_pkg_xyz", "nor_me"]'))
    for lib in (hub, torch.hub):
        with pytest.raises(RuntimeError, match="^Missing dependencies: no_such_pkg_xyz, nor_me$"):
            lib.load(str(repo), "tiny", source="local")
        with pytest.raises(ValueError, match="model should be a string"):
            lib.load(str(repo), 3, source="local")
        with pytest.raises(ValueError, match='Unknown source: "svn". Allowed values: "github" '
                                             r'\| "local".'):
            lib.load(str(repo), "tiny", source="svn")


# ---------------------------------------------------------------- GitHub repos, offline
def test_github_repo_from_cache_needs_no_network(home, no_network, capsys):
    torch = pytest.importorskip("torch")
    _make_repo(home / "hub" / "someone_tools_main")
    for lib in (hub, torch.hub):
        assert lib.list("someone/tools:main", trust_repo=True) == ["scale", "tiny"]
        assert lib.help("someone/tools:main", "tiny", trust_repo=True) == \
            "Build a tiny thing: ``n`` values times ``factor``."
        assert lib.load("someone/tools:main", "tiny", 2, trust_repo=True) == [0, 2]
        # no ref given and offline: the cached main branch is used
        assert lib.load("someone/tools", "tiny", 1, trust_repo="check") == [0]
    assert "Using cache found in" in capsys.readouterr().err
    # a repo already in the cache counts as trusted: nothing is added to the list
    assert (home / "hub" / "trusted_list").read_text() == ""


def test_untrusted_repo_asks_first(home, no_network, monkeypatch):
    torch = pytest.importorskip("torch")
    answers = []
    monkeypatch.setattr("builtins.input", lambda prompt: answers.pop(0))
    for lib in (hub, torch.hub):
        answers[:] = ["n"]
        with pytest.raises(Exception, match="^Untrusted repository.$"):
            lib.load("stranger/repo:main", "tiny", skip_validation=True)
        answers[:] = ["maybe"]
        with pytest.raises(ValueError, match="Unrecognized response maybe."):
            lib.load("stranger/repo:main", "tiny", trust_repo=False, skip_validation=True)
    answers[:] = ["yes"]
    with pytest.raises(urllib.error.URLError):  # trusted now; the download needs the network
        hub.load("stranger/repo:main", "tiny", skip_validation=True)
    assert (home / "hub" / "trusted_list").read_text() == "stranger_repo\n"
    with pytest.raises(urllib.error.URLError):  # no question asked the second time
        hub.load("stranger/repo:main", "tiny", skip_validation=True)


def test_github_repo_offline_without_cache_says_so(home, no_network):
    torch = pytest.importorskip("torch")
    for lib in (hub, torch.hub):
        with pytest.raises(RuntimeError, match="no internet connection and the repo could not "
                                               "be found in the cache"):
            lib.load("someone/absent", "tiny", trust_repo=True)
    with pytest.raises(urllib.error.URLError) as info:
        hub.load("someone/absent:v1", "tiny", trust_repo=True, skip_validation=True)
    msg = str(info.value)
    assert "github.com/someone/absent/zipball/v1" in msg
    assert "network could not be reached" in msg and "Name or service not known" in msg
    with pytest.raises(urllib.error.URLError, match="network could not be reached"):
        hub.load("someone/absent:v1", "tiny", trust_repo=True)  # the branch check is online
    assert sorted(os.listdir(home / "hub")) == ["trusted_list"]  # no partial download left


def _github_zip(path, top):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{top}/hubconf.py", HUBCONF)
        zf.writestr(f"{top}/helpers.py", "def scale(x, f):\n    return x * f\n")


def test_github_download_is_unpacked_into_the_cache(home, monkeypatch, tmp_path):
    # The zipball comes from a file:// URL standing in for github.com.
    archive = tmp_path / "zipball.zip"
    _github_zip(archive, "someone-tools-0123abc")
    real = urllib.request.urlopen
    seen = []

    def fake(req, *a, **k):
        seen.append(req.full_url)
        return real(archive.as_uri())

    monkeypatch.setattr(hub, "urlopen", fake)
    assert hub.load("someone/tools:dev", "tiny", 3, trust_repo=True, skip_validation=True) == \
        [0, 2, 4]
    assert seen == ["https://github.com/someone/tools/zipball/dev"]
    assert sorted(os.listdir(home / "hub")) == ["someone_tools_dev", "trusted_list"]
    # an archive whose entry climbs out of the cache is refused
    _bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(_bad, "w") as zf:
        zf.writestr("top/hubconf.py", HUBCONF)
        zf.writestr("top/../../escape.py", "x = 1")
    archive = _bad
    with pytest.raises(ValueError, match="directory traversal"):
        hub.load("someone/tools:evil", "tiny", trust_repo=True, skip_validation=True)
    assert not (home / "escape.py").exists()
    assert sorted(os.listdir(home / "hub")) == ["someone_tools_dev", "trusted_list"]


# ---------------------------------------------------------------- checkpoints
def _checkpoint_bytes(tmp_path, writer):
    path = tmp_path / f"src_{writer.__name__}.pth"
    state = {"weight": writer.arange(6.0).reshape(2, 3), "step": 7}
    writer.save(state, path)
    return path.read_bytes()


@pytest.mark.parametrize("writer", ["torch", "glasstorch"])
def test_load_state_dict_from_prepopulated_cache(home, no_network, tmp_path, writer):
    lib = pytest.importorskip(writer)
    ckpt = home / "hub" / "checkpoints"
    ckpt.mkdir(parents=True)
    (ckpt / "model-0123abcd.pth").write_bytes(_checkpoint_bytes(tmp_path, lib))
    url = "https://download.example.invalid/models/model-0123abcd.pth"
    state = hub.load_state_dict_from_url(url, check_hash=True, weights_only=True)
    assert isinstance(state["weight"], glasstorch.Tensor)
    assert state["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert state["step"] == 7
    # model_zoo.load_url is the same function
    from glasstorch.utils import model_zoo
    assert model_zoo.load_url is hub.load_state_dict_from_url
    assert model_zoo.load_url(url, map_location="cpu")["step"] == 7
    with pytest.raises(urllib.error.URLError, match="network could not be reached"):
        hub.load_state_dict_from_url(url.replace("model-", "other-"), progress=False)
    assert sorted(os.listdir(ckpt)) == ["model-0123abcd.pth"]


def test_download_from_file_url_with_hash_check(home, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    data = _checkpoint_bytes(tmp_path, glasstorch)
    digest = hashlib.sha256(data).hexdigest()
    good = tmp_path / "served" / f"net-{digest[:10]}.pth"
    good.parent.mkdir()
    good.write_bytes(data)
    state = hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False)
    assert state["step"] == 7
    cached = home / "hub" / "checkpoints" / good.name
    assert cached.read_bytes() == data
    assert f'Downloading: "{good.as_uri()}" to {cached}' in capsys.readouterr().out
    # file_name and model_dir choose where it lands
    out = tmp_path / "mine"
    hub.load_state_dict_from_url(good.as_uri(), model_dir=str(out), file_name="x.pt",
                                 progress=False)
    assert os.listdir(out) == ["x.pt"]

    bad = tmp_path / "served" / "net-deadbeef.pth"
    bad.write_bytes(data)
    messages = []
    for lib, where in ((hub, tmp_path / "ours"), (torch.hub, tmp_path / "theirs")):
        with pytest.raises(RuntimeError) as info:
            lib.load_state_dict_from_url(bad.as_uri(), model_dir=str(where), check_hash=True,
                                         progress=False)
        messages.append(str(info.value))
        assert os.listdir(where) == []  # neither the file nor a partial one
    assert messages[0] == messages[1] == \
        f'invalid hash value (expected "deadbeef", got "{digest}")'


def test_download_url_to_file(tmp_path):
    src = tmp_path / "blob.bin"
    payload = os.urandom(300_000)  # several read chunks
    src.write_bytes(payload)
    dst = tmp_path / "out" / "blob.bin"
    dst.parent.mkdir()
    digest = hashlib.sha256(payload).hexdigest()
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=True)
    assert dst.read_bytes() == payload
    # a failed download keeps the good file that was there and leaves nothing else
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix="00000000"
                                 if not digest.startswith("00000000") else "11111111",
                                 progress=False)
    with pytest.raises(urllib.error.URLError, match="No such file"):
        hub.download_url_to_file((tmp_path / "missing").as_uri(), str(dst), progress=False)
    assert dst.read_bytes() == payload and os.listdir(dst.parent) == ["blob.bin"]


def test_legacy_single_file_zip_is_extracted(home, tmp_path):
    data = _checkpoint_bytes(tmp_path, glasstorch)
    served = tmp_path / "served"
    served.mkdir()
    with zipfile.ZipFile(served / "old.zip", "w") as zf:
        zf.writestr("old.pth", data)
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        state = hub.load_state_dict_from_url((served / "old.zip").as_uri(), progress=False)
    assert state["step"] == 7
    assert sorted(os.listdir(home / "hub" / "checkpoints")) == ["old.pth", "old.zip"]


def test_hub_is_a_lazy_attribute():
    assert glasstorch.hub is hub
    assert textwrap.dedent(hub.load.__doc__ or "").strip()
