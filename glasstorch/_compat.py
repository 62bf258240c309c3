"""Serve ``import torch`` (and ``import torchvision``) from glasstorch.

``install_as_torch()`` puts a finder at the front of ``sys.meta_path``: ``torch`` and every
``torch.<sub>`` resolve to the glasstorch module of the same path (``torch.nn.functional`` ->
``glasstorch.nn.functional``), and ``torchvision.<sub>`` to ``glasstorch.vision.<sub>``. The
served modules ARE the glasstorch modules (no copies, no proxies), so ``torch.Tensor is
glasstorch.Tensor`` and setting ``torch.backends.cudnn.benchmark`` sets glasstorch's flag.

Looking up a name glasstorch lacks on a served module raises ``NotImplementedInGlasstorch``
naming the torch symbol. It is both a ``NotImplementedError`` (what a user should see) and an
``AttributeError`` (so ``hasattr`` and ``getattr(mod, name, default)`` keep working);
``from torch.x import missing`` raises ``ImportNotInGlasstorch`` (NotImplementedError and
ImportError) with the same message. Importing a torch submodule glasstorch lacks raises
``ModuleNotInGlasstorch``, both a ``NotImplementedError`` and a ``ModuleNotFoundError`` (so
``try: import ... except ImportError`` keeps working).

Identity. While it serves, ``importlib.metadata`` also finds ``torch`` and ``torchvision``
distributions (``version("torch") == "2.13.0+cpu"``, ``version("torchvision") ==
"0.28.0+cpu"``, no files): the finder implements ``find_distributions`` and, being first on
``sys.meta_path``, answers before any installed torch. ``torch.__version__`` is a
``TorchVersion`` (``glasstorch.torch_version``), as torch's. ``python -m glasstorch
provide-torch-metadata`` writes the same metadata to site-packages for pip (``_write_metadata``).

What stays glasstorch's, on purpose: ``torch.__name__`` is ``"glasstorch"`` and classes keep
their own ``__module__`` (``torch.Tensor.__module__ == "glasstorch._tensor"``, torch says
``"torch"``). The served module is glasstorch itself, not a copy; renaming it or its classes
while serving would change glasstorch for the code that imports it by its own name, and the
names are load-bearing: pickle finds a class through ``__module__``, and ``torch.save`` maps
glasstorch's classes to torch's names from it (``serialization._torch_home``). The cost: code
that recognises torch objects by name (``type(x).__module__ == "torch"``, ``str(type(x))
.startswith("<class 'torch.")``, ``xp.__name__ == "torch"``) does not recognise glasstorch's;
``isinstance(x, torch.Tensor)`` does. docs/pytorch-users.md lists the cases met in libraries.
"""

import dis
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import types

__all__ = ["NotImplementedInGlasstorch", "ImportNotInGlasstorch", "ModuleNotInGlasstorch",
           "install_as_torch",
           "uninstall_as_torch", "is_installed"]

# served top-level name -> glasstorch package that implements it
_SERVED = {"torch": "glasstorch", "torchvision": "glasstorch.vision"}
# longest glasstorch prefix first, so glasstorch.vision.x maps to torchvision.x
_REVERSE = sorted(((gt, torch) for torch, gt in _SERVED.items()), key=lambda p: -len(p[0]))


class NotImplementedInGlasstorch(NotImplementedError, AttributeError):
    """A torch attribute that glasstorch does not provide (yet)."""

    def __init__(self, msg, *, name=None, obj=None):
        AttributeError.__init__(self, msg, name=name, obj=obj)


class ImportNotInGlasstorch(NotImplementedError, ImportError):
    """``from torch.x import name`` of a name glasstorch does not provide (yet)."""

    def __init__(self, msg, *, name=None, path=None):
        ImportError.__init__(self, msg, name=name, path=path)


class ModuleNotInGlasstorch(NotImplementedError, ModuleNotFoundError):
    """A torch module that glasstorch does not provide (yet)."""

    def __init__(self, msg, *, name=None):
        ModuleNotFoundError.__init__(self, msg, name=name)


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]
# INSTALLER of the stand-in distributions: how _write_metadata recognises its own dist-info
_INSTALLER = "glasstorch\n"


def _in_from_import(depth):
    """Whether the frame ``depth`` levels up is executing ``from module import name``.

    Python turns an AttributeError raised there into a bare "cannot import name" ImportError
    that loses our message; any other exception type passes through unchanged.
    """
    try:
        frame = sys._getframe(depth + 1)
        return frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM
    except (ValueError, IndexError, AttributeError):
        return False


def _torch_name(gt_name):
    """``glasstorch.nn.functional`` -> ``torch.nn.functional`` (None when not a served name)."""
    for gt, torch in _REVERSE:
        if gt_name == gt or gt_name.startswith(gt + "."):
            return torch + gt_name[len(gt):]
    return None


def _target_name(fullname):
    """``torch.nn`` -> ``glasstorch.nn``; None for names this finder does not serve."""
    top, dot, rest = fullname.partition(".")
    gt = _SERVED.get(top)
    if gt is None:
        return None
    return gt + dot + rest


def _is_public(gt_name):
    return not any(part.startswith("_") for part in gt_name.split("."))


def _patch(module):
    """Give a served glasstorch module a ``__getattr__`` that names the missing torch symbol.

    An existing module-level ``__getattr__`` (lazy imports) is kept and consulted first; a
    submodule that exists on disk but was not imported yet is imported, as torch's lazy
    submodules are.
    """
    namespace = module.__dict__
    previous = namespace.get("__getattr__")
    if getattr(previous, "_glasstorch_compat", False):
        return
    gt_name = module.__name__
    torch_name = _torch_name(gt_name)
    if torch_name is None:
        return

    def __getattr__(name):
        if previous is not None:
            try:
                value = previous(name)
            except AttributeError:
                pass
            else:
                if isinstance(value, types.ModuleType):
                    _patch(value)
                return value
        if name.startswith("__") and name.endswith("__"):
            # protocol probes (__path__, __file__, ...) must stay plain AttributeErrors
            raise AttributeError(f"module {torch_name!r} has no attribute {name!r}")
        if hasattr(module, "__path__") and not name.startswith("_"):
            try:
                found = importlib.util.find_spec(f"{gt_name}.{name}") is not None
            except (ImportError, ValueError):
                found = False
            if found:
                sub = importlib.import_module(f"{gt_name}.{name}")
                _patch(sub)
                return sub
        msg = f"{torch_name}.{name} is not implemented in glasstorch (yet)"
        if _in_from_import(1):
            raise ImportNotInGlasstorch(msg, name=torch_name)
        raise NotImplementedInGlasstorch(msg, name=name, obj=module)

    __getattr__._glasstorch_compat = True
    namespace["__getattr__"] = __getattr__


_TORCH_NAMES = None


def missing_torch_attribute(module_name, name):
    """The error for ``glasstorch.<name>`` when glasstorch lacks it: NotImplementedInGlasstorch
    naming the torch symbol if torch 2.13 has that name (``_torch_names.txt``), else the plain
    AttributeError a misspelt name gets in torch too."""
    global _TORCH_NAMES
    if _TORCH_NAMES is None:
        path = os.path.join(os.path.dirname(__file__), "_torch_names.txt")
        with open(path) as f:
            _TORCH_NAMES = frozenset(line.strip() for line in f if not line.startswith("#"))
    if name in _TORCH_NAMES:
        return NotImplementedInGlasstorch(f"torch.{name} is not implemented in glasstorch (yet)",
                                          name=name)
    return AttributeError(f"module {module_name!r} has no attribute {name!r}")


def _tensor_getattr(self, name):
    # only reached when normal lookup failed: name the torch method that is missing
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"'Tensor' object has no attribute {name!r}")
    raise NotImplementedInGlasstorch(
        f"torch.Tensor.{name} is not implemented in glasstorch (yet)", name=name, obj=self)


class _ServedLoader(importlib.abc.Loader):
    """Loads ``torch.x`` by importing ``glasstorch.x`` and registering that very module."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None  # a placeholder; exec_module swaps in the real glasstorch module

    def exec_module(self, module):
        real = importlib.import_module(self.target)
        _patch(real)
        # the import system returns whatever sys.modules holds after exec_module, and this
        # leaves glasstorch's own __spec__/__name__ untouched
        sys.modules[module.__spec__.name] = real


def _served_distributions():
    """name -> (version, Requires-Dist entries) of the distributions glasstorch stands in for."""
    from . import version
    return {"torch": (version.__version__, ["glasstorch"]),
            "torchvision": (version.torchvision_version,
                            ["glasstorch", f"torch=={version.torch_spec}"])}


def _normalize(name):
    # PEP 503: "Torch_Vision", "torch-vision" and "torch.vision" name one distribution
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata_text(name):
    """The METADATA file of the stand-in distribution ``name`` (core metadata 2.1)."""
    version, requires = _served_distributions()[name]
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             f"Summary: {name} {version} as served by glasstorch (metadata only; "
             "the code is glasstorch's)"]
    lines += [f"Requires-Dist: {req}" for req in requires]
    return "\n".join(lines) + "\n"


_distribution_cls = None


def _served_distribution(name):
    """An ``importlib.metadata.Distribution`` for ``name`` with our metadata and no files.

    The class is made on first use: importing importlib.metadata costs more than the rest of
    this module, and only programs that ask for metadata need it.
    """
    global _distribution_cls
    if _distribution_cls is None:
        import pathlib
        from importlib.metadata import Distribution

        class ServedDistribution(Distribution):
            """torch/torchvision metadata answered by glasstorch while it serves them."""

            def __init__(self, name):
                self._served_name = name

            def read_text(self, filename):
                """METADATA, top_level.txt and INSTALLER; None for any other file."""
                if filename == "METADATA":
                    return _metadata_text(self._served_name)
                if filename == "top_level.txt":
                    return self._served_name + "\n"
                if filename == "INSTALLER":
                    return _INSTALLER
                return None

            def locate_file(self, path):
                """Paths resolve beside the glasstorch package (the code that serves)."""
                return pathlib.Path(os.path.dirname(os.path.dirname(__file__))) / path

        _distribution_cls = ServedDistribution
    return _distribution_cls(name)


class _TorchFinder(importlib.abc.MetaPathFinder):
    def find_distributions(self, context=None):
        """``importlib.metadata``'s hook: the torch and torchvision distributions we serve.

        Only a search of the default path (``sys.path``) sees them: a search of explicit
        folders asks what is installed there, and nothing of ours is.
        """
        if context is None:
            from importlib.metadata import DistributionFinder
            context = DistributionFinder.Context()
        if context.path is not sys.path:
            return iter(())
        wanted = None if context.name is None else _normalize(context.name)
        return iter([_served_distribution(name) for name in _served_distributions()
                     if wanted is None or _normalize(name) == wanted])

    def find_spec(self, fullname, path=None, target=None):
        gt_name = _target_name(fullname)
        if gt_name is None:
            return None
        try:
            spec = importlib.util.find_spec(gt_name)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            if fullname.partition(".")[0] == "torchvision" and gt_name.count(".") == 1:
                raise ModuleNotInGlasstorch(
                    "torchvision is served by glasstorch.vision, which is not available yet "
                    "in this glasstorch", name=fullname)
            raise ModuleNotInGlasstorch(
                f"{fullname} is not implemented in glasstorch (yet): there is no module "
                f"{gt_name}", name=fullname)
        is_package = spec.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, _ServedLoader(gt_name),
                                              is_package=is_package)


_finder = None


def is_installed():
    """Whether ``import torch`` is currently served by glasstorch."""
    return _finder is not None and _finder in sys.meta_path


def install_as_torch():
    """Make ``import torch`` / ``import torch.<sub>`` / ``import torchvision`` load glasstorch.

    Call it before anything imports torch. Raises RuntimeError if the real torch was already
    imported in this process (mixing the two would hand glasstorch tensors to torch code).
    Returns the glasstorch module (what ``import torch`` now gives).
    """
    global _finder
    import glasstorch
    from glasstorch._tensor import Tensor

    current = sys.modules.get("torch")
    if current is not None and current is not glasstorch:
        raise RuntimeError(
            "install_as_torch(): the real torch is already imported in this process; call "
            "glasstorch.install_as_torch() (or use `python -m glasstorch run`) before anything "
            "imports torch")
    if not is_installed():
        _finder = _TorchFinder()
        sys.meta_path.insert(0, _finder)
    for name, mod in list(sys.modules.items()):
        if (isinstance(mod, types.ModuleType) and _torch_name(name) is not None
                and _is_public(name)):
            _patch(mod)
    if "__getattr__" not in Tensor.__dict__:
        Tensor.__getattr__ = _tensor_getattr
    return importlib.import_module("torch")


def uninstall_as_torch():
    """Undo ``install_as_torch``: later ``import torch`` finds the real torch again. The
    ``__getattr__`` hooks added to glasstorch modules stay (they only change error messages)."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None
    for name in [n for n in sys.modules if n.partition(".")[0] in _SERVED]:
        del sys.modules[name]
    from glasstorch._tensor import Tensor
    if Tensor.__dict__.get("__getattr__") is _tensor_getattr:
        del Tensor.__getattr__


# Metadata-only distributions on disk, for pip (``python -m glasstorch provide-torch-metadata``).

def _site_packages(target=None):
    """The folder to write to: ``target``, else this interpreter's site-packages."""
    if target is None:
        import sysconfig
        target = sysconfig.get_paths()["purelib"]
    return os.path.abspath(target)


def _is_ours(path):
    try:
        with open(os.path.join(path, "INSTALLER"), encoding="utf-8") as f:
            return f.read() == _INSTALLER
    except OSError:
        return False


def _installed(site, name):
    """``[(path, ours)]``: what in ``site`` installs distribution ``name`` (its dist-info or
    egg-info folders, a package folder or module of that name)."""
    found = []
    wanted = _normalize(name)
    for entry in sorted(os.listdir(site)):
        path = os.path.join(site, entry)
        stem, ext = os.path.splitext(entry)
        if ext in (".dist-info", ".egg-info"):
            if _normalize(stem.split("-")[0]) == wanted:
                found.append((path, ext == ".dist-info" and _is_ours(path)))
        elif entry in (name, name + ".py"):
            found.append((path, False))
    return found


def _record_line(relpath, data):
    import base64
    import hashlib
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{relpath},sha256={digest},{len(data)}"


def _write_metadata(target=None, torchvision=False):
    """Write metadata-only ``torch`` (and ``torchvision``) dist-info folders into ``target``
    (default: this environment's site-packages) so pip counts them as installed.

    Each folder has METADATA, INSTALLER and a RECORD listing every file, so ``pip uninstall
    torch`` removes it cleanly. Nothing importable is written: ``import torch`` keeps failing
    unless glasstorch serves it. Raises RuntimeError, writing nothing, when a real torch (or
    torchvision) is installed there. Returns the folders written.
    """
    site = _site_packages(target)
    if not os.path.isdir(site):
        raise RuntimeError(f"{site} is not a folder")
    names = ["torch", "torchvision"] if torchvision else ["torch"]
    for name in names:
        # a dist-info names the version; a bare package folder is reported otherwise
        real = sorted((path for path, ours in _installed(site, name) if not ours),
                      key=lambda path: not path.endswith(".dist-info"))
        if real:
            raise RuntimeError(
                f"a real {name} is installed in {site} ({os.path.basename(real[0])}); "
                f"refusing to write metadata over it. Uninstall it first (pip uninstall "
                f"{name}) if this environment should use glasstorch's.")
    written = []
    for name in names:
        _remove_dist_infos(site, name)  # an older version's stand-in
        version = _served_distributions()[name][0]
        folder = f"{name}-{version}.dist-info"
        os.makedirs(os.path.join(site, folder))
        files = {"METADATA": _metadata_text(name).encode(), "INSTALLER": _INSTALLER.encode()}
        record = []
        for filename, data in files.items():
            with open(os.path.join(site, folder, filename), "wb") as f:
                f.write(data)
            record.append(_record_line(f"{folder}/{filename}", data))
        record.append(f"{folder}/RECORD,,")
        with open(os.path.join(site, folder, "RECORD"), "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(record) + "\n")
        written.append(os.path.join(site, folder))
    return written


def _remove_dist_infos(site, name):
    """Delete the stand-in dist-info folders of ``name`` in ``site`` (the files RECORD lists,
    then the folder); real distributions are left alone. Returns the folders removed."""
    import csv
    removed = []
    for path, ours in _installed(site, name):
        if not ours:
            continue
        with open(os.path.join(path, "RECORD"), encoding="utf-8", newline="") as f:
            listed = [row[0] for row in csv.reader(f) if row]
        for rel in listed:
            full = os.path.normpath(os.path.join(site, rel))
            if os.path.dirname(full) == path and os.path.isfile(full):
                os.remove(full)
        os.rmdir(path)  # fails loudly if something unlisted was put inside
        removed.append(path)
    return removed


def _remove_metadata(target=None):
    """Remove the torch and torchvision stand-ins ``_write_metadata`` wrote into ``target``.
    Returns the folders removed (none is an answer, not an error)."""
    site = _site_packages(target)
    if not os.path.isdir(site):
        raise RuntimeError(f"{site} is not a folder")
    return [path for name in ("torchvision", "torch") for path in _remove_dist_infos(site, name)]
