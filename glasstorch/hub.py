"""torch.hub: models published through a repository's ``hubconf.py``, and downloaded checkpoints.

A *hub repo* is a folder with a ``hubconf.py`` whose public callables are the entrypoints and
whose optional ``dependencies`` list names the modules they need. ``load``/``list``/``help`` read
it from a local folder (``source='local'``) or from a GitHub repository, downloaded once as a
zip into ``get_dir()`` (``$TORCH_HOME/hub``, by default ``~/.cache/torch/hub``) and reused from
there. ``load_state_dict_from_url`` keeps checkpoints in ``<hub dir>/checkpoints``: a file
already there loads with no network at all.

Downloads use urllib (so ``file://`` URLs work too) and land in a temporary file renamed into
place only when complete, so an interrupted or corrupt download never leaves a partial file
where a good one is expected. Where the network cannot be reached, the error says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

try:
    from tqdm.auto import tqdm
except ImportError:  # a small stand-in that prints progress to stderr

    class tqdm:  # noqa: N801  (torch.hub.tqdm is this name)
        """Minimal progress display used when the ``tqdm`` package is not installed."""

        def __init__(self, total=None, disable=False, unit=None, unit_scale=None,
                     unit_divisor=None):
            self.total = total
            self.disable = disable
            self.n = 0

        def update(self, n):
            """Advance by ``n`` units and redraw the line."""
            if self.disable:
                return
            self.n += n
            if self.total is None:
                sys.stderr.write(f"\r{self.n:.1f} bytes")
            else:
                sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
            sys.stderr.flush()

        def close(self):
            """End the progress line."""
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if not self.disable:
                sys.stderr.write("\n")
            self.close()

# the SHA256 prefix in a checkpoint's name: ``resnet18-f37072fd.pth`` -> ``f37072fd``
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")

ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
# owners whose repos load without asking (as torch.hub trusts them)
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


# ---------------------------------------------------------------- cache directory
def _get_torch_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir() -> str:
    """The hub cache folder: the one given to ``set_dir``, else ``$TORCH_HOME/hub``, where
    ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch`` and that to ``~/.cache/torch``."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    """Use folder ``d`` (``~`` expanded) as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---------------------------------------------------------------- network
def _urlopen(req):
    """``urlopen``, with a failure to reach a network host said plainly (still a URLError, the
    type torch raises); local schemes (``file:``) keep urllib's own message."""
    url = req.full_url if isinstance(req, Request) else req
    try:
        return urlopen(req)
    except HTTPError:
        raise
    except URLError as err:
        if urlparse(url).scheme in ("file", "data", ""):
            raise
        raise URLError(f"could not reach {url}: the network could not be reached "
                       f"({err.reason})") from err


def _read_url(req):
    with _urlopen(req) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to the path ``dst``. With ``hash_prefix``, the file's SHA256 must start
    with it (RuntimeError otherwise). ``progress`` shows a progress bar on stderr.

    The bytes go to a temporary file next to ``dst`` that is renamed to ``dst`` only when the
    download completed and the hash matched; on any failure it is removed."""
    dst = os.path.expanduser(os.fspath(dst))
    while True:  # a fresh name: never write over another download in flight
        tmp = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            f = open(tmp, "xb")  # noqa: SIM115  (closed in the finally below)
        except FileExistsError:
            continue
        break
    try:
        with _urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            length = u.info().get_all("Content-Length")
            total = int(length[0]) if length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=total, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
                while True:
                    chunk = u.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    bar.update(len(chunk))
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(
                    f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        os.replace(tmp, dst)
    finally:
        f.close()
        if os.path.exists(tmp):
            os.remove(tmp)


# ---------------------------------------------------------------- zip archives
def _safe_extract(zf, dest):
    """Extract every member of ``zf`` under ``dest``, refusing members whose path would land
    outside it (absolute paths, drive letters, ``..``)."""
    root = Path(dest).resolve()
    members = zf.infolist()
    for member in members:  # all checked before anything is written
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve().is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
    for member in members:
        zf.extract(member, root)


def _remove_if_exists(path):
    if os.path.isfile(path) or os.path.islink(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


# ---------------------------------------------------------------- GitHub repos
def _parse_repo_info(github):
    """``owner/name[:ref]`` -> (owner, name, ref). Without a ref, ``main`` when the repo has such
    a branch, else ``master``; offline, whichever of the two is in the cache."""
    repo_info, _, ref = github.partition(":")
    try:
        owner, name = repo_info.split("/")
    except ValueError:
        raise ValueError(f'Invalid GitHub repo "{github}": expected "repo_owner/repo_name[:ref]"'
                         ) from None
    if ref:
        return owner, name, ref
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:
        for candidate in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{candidate}")):
                return owner, name, candidate
        raise RuntimeError(f"It looks like there is no internet connection and the repo could "
                           f"not be found in the cache ({get_dir()})") from e


def _validate_not_a_forked_repo(owner, name, ref):
    # A commit reachable only from a fork would otherwise be served under the parent's name.
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 1
        while True:
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                items = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:
                headers.pop("Authorization", None)  # retry without a token lacking rights
                items = json.loads(_read_url(Request(url, headers=headers)))
            if not items:
                break
            for item in items:
                if item["name"] == ref or item["commit"]["sha"].startswith(ref):
                    return
            page += 1
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit "
                     f"from a forked repo, please call hub.load() with forked repo directly.")


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    trusted_file = os.path.join(hub_dir, "trusted_list")
    Path(trusted_file).touch(exist_ok=True)
    with open(trusted_file) as fh:
        trusted = {line.strip() for line in fh}
    owner_name = f"{owner}_{name}"
    # a repo downloaded before the trust list existed counts as trusted
    cached = next(os.walk(hub_dir))[1]
    is_trusted = (owner_name in trusted or owner_name_branch in cached
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted "
                       f"repositories and as such cannot be downloaded. Do you trust this "
                       f"repository and wish to add it to the trusted list of repositories "
                       f"(y/N)?")
        if answer.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # torch raises this exact type
        else:
            raise ValueError(f"Unrecognized response {answer}.")
    if not is_trusted:
        with open(trusted_file, "a") as fh:
            fh.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                         skip_validation=False):
    """The local folder of GitHub repo ``github``: from the cache, or downloaded into it."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    branch = ref.replace("/", "_")  # a branch may hold '/', a folder name may not
    owner_name_branch = f"{owner}_{name}_{branch}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    archive = os.path.join(hub_dir, branch + ".zip")
    _remove_if_exists(archive)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    try:
        download_url_to_file(url, archive, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        # 300 Multiple Choices: the ref is both a tag and a branch; take the branch, as git does
        warnings.warn(
            f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
            "Torchhub will now assume that it's a branch. You can disambiguate tags and "
            "branches by explicitly passing refs/heads/branch_name or refs/tags/tag_name as the "
            "ref. That might require using skip_validation=True.", stacklevel=3)
        url = f"https://github.com/{owner}/{name}/zipball/refs/heads/{ref}"
        download_url_to_file(url, archive, progress=False)
    try:
        with zipfile.ZipFile(archive) as zf:
            # GitHub's archive holds one folder (``owner-name-sha/``), named by GitHub
            top = zf.infolist()[0].filename.split("/")[0]
            extracted = os.path.join(hub_dir, top)
            _remove_if_exists(extracted)
            _safe_extract(zf, hub_dir)
    finally:
        _remove_if_exists(archive)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)  # GitHub's folder name -> owner_name_branch
    return repo_dir


# ---------------------------------------------------------------- hubconf
@contextlib.contextmanager
def _on_sys_path(path):
    # hubconf.py may import its repo's own modules
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    dependencies = getattr(module, VAR_DEPENDENCY, None)
    if dependencies is not None:
        missing = [d for d in dependencies if importlib.util.find_spec(d) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    entry = getattr(module, model, None) if model in dir(module) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _on_sys_path(hubconf_dir):
        module = _import_hubconf(hubconf_dir)
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """The names of the entrypoints (public callables of ``hubconf.py``) of GitHub repo
    ``github`` (``"owner/name[:ref]"``), downloading it into the cache unless it is there."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """The docstring of entrypoint ``model`` of GitHub repo ``github``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entrypoint ``model`` of a hub repo's ``hubconf.py`` with ``*args, **kwargs`` and
    return what it returns (usually a model).

    ``source='github'``: ``repo_or_dir`` is ``"owner/name[:ref]"``, downloaded into
    ``get_dir()`` unless cached (``force_reload`` downloads again); repos outside the trusted
    list ask first unless ``trust_repo=True``. ``source='local'``: ``repo_or_dir`` is a folder
    holding ``hubconf.py``. The modules in hubconf's ``dependencies`` must be importable."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


# ---------------------------------------------------------------- checkpoints
def _is_legacy_zip_format(filename):
    # a zip of one file written by torch.save < 1.6 (today's format is a zip of many entries)
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as _load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as zf:
        member = zf.infolist()[0]
        _safe_extract(zf, model_dir)
    return _load(os.path.join(model_dir, member.filename), map_location=map_location,
                 weights_only=weights_only)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False):
    """Load the object ``torch.save``-d at ``url``, caching the file in ``model_dir`` (default
    ``<get_dir()>/checkpoints``) under its name in the URL (or ``file_name``). A cached file is
    loaded without touching the network.

    With ``check_hash`` a download is verified against the SHA256 prefix in its name
    (``name-<sha256 prefix>.ext``). ``map_location`` and ``weights_only`` go to ``torch.load``."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            m = HASH_REGEX.search(filename)
            hash_prefix = m.group(1) if m else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)

