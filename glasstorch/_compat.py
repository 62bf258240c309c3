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
"""

import dis
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
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


class _TorchFinder(importlib.abc.MetaPathFinder):
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
