"""``disable``, ``OptimizeContext`` and ``OptimizedModule``: torch._dynamo's frame evaluation.

``disable(fn)`` returns a wrapper that always runs ``fn`` as Python; the capture's bytecode
check treats a call to it as a graph break, and the wrapper carries the attributes torch's
carries (``_torchdynamo_disable``, ``_torchdynamo_orig_callable``). ``OptimizeContext`` is what
``torch.compile`` applies; ``OptimizedModule`` is the module wrapper it returns for an
``nn.Module`` (also what ``disable`` gives for a module, which then runs as it is).
"""

from __future__ import annotations

import functools

from ..nn.modules.module import Module

__all__ = ["disable", "innermost_fn", "OptimizedModule", "DisableContext", "OptimizeContext"]

_CTX_MANAGER_MESSAGE = (
    "torch._dynamo.optimize(...) is used with a context manager. Please refer to "
    "https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html to use "
    "torch._dynamo.optimize(...) as an annotation/decorator. ")


def innermost_fn(fn):
    """The original callable under any number of ``disable``/compile wrappers."""
    while hasattr(fn, "_torchdynamo_orig_callable"):
        fn = fn._torchdynamo_orig_callable
    return fn


class DisableContext:
    """What ``disable()`` returns without a function: a decorator (not a context manager:
    ``with`` raises, as in torch)."""

    def __init__(self, msg=None, wrapping=True, recursive=True):
        self.msg = msg
        self.wrapping = wrapping
        self.recursive = recursive

    def __call__(self, fn):
        if isinstance(fn, Module):
            return OptimizedModule(fn, self)
        if isinstance(fn, type):
            return fn          # a class is left alone (its methods can be disabled)
        assert callable(fn), "fn must be callable"

        @functools.wraps(fn)
        def _fn(*args, **kwargs):
            return fn(*args, **kwargs)
        _fn._torchdynamo_disable = True
        _fn._torchdynamo_disable_msg = self.msg
        _fn._torchdynamo_orig_callable = fn
        _fn._torchdynamo_wrapper_id = id(_fn)
        _fn._torchdynamo_disable_recursive = self.recursive
        return _fn

    def __enter__(self):
        raise RuntimeError(_CTX_MANAGER_MESSAGE)

    def __exit__(self, *exc):
        return False


class OptimizeContext:
    """What ``torch.compile`` applies to its target: a module comes back as an
    ``OptimizedModule`` holding it, a function as a wrapper carrying
    ``_torchdynamo_orig_callable``; both call through a ``CompiledFrame`` (capture, guards,
    cache; see ``convert_frame``)."""

    def __init__(self, backend="inductor", fullgraph=False, dynamic=None, mode=None):
        from .backends.registry import lookup_backend
        lookup_backend(backend)        # an unknown name fails here, as in torch
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode

    def frame(self, fn, module=None):
        from .convert_frame import CompiledFrame
        return CompiledFrame(fn, module, self.backend, self.fullgraph, self.dynamic, self.mode)

    def __call__(self, fn):
        if isinstance(fn, Module) and not isinstance(fn, OptimizedModule):
            return OptimizedModule(fn, self)
        if isinstance(fn, OptimizedModule):
            fn = fn._orig_mod.forward   # torch compiles an already compiled module's forward
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is "
                                 f"provided.")
        frame = self.frame(fn)

        @functools.wraps(fn)
        def compile_wrapper(*args, **kwargs):
            return frame(*args, **kwargs)
        compile_wrapper._torchdynamo_orig_callable = fn
        compile_wrapper._glasstorch_frame = frame
        return compile_wrapper


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Keep ``fn`` out of compilation: returns a wrapper that runs it eagerly (with
    ``recursive=False`` only ``fn``'s own frame is skipped, not the functions it calls).
    Without ``fn`` returns a decorator. ``reason`` is recorded for error messages."""
    ctx = DisableContext(msg=reason, wrapping=wrapping, recursive=recursive)
    if fn is None:
        return ctx
    fn = innermost_fn(fn)
    assert callable(fn), "fn must be callable"
    return ctx(fn)


class OptimizedModule(Module):
    """A module wrapped by the compiler (what ``torch.compile(module)`` returns in torch): it
    holds the original as ``_orig_mod`` (its parameters appear under ``_orig_mod.``), forwards
    attribute reads and writes to it, and runs it when called."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable",
                           "get_compiler_config", "forward", "_forward", "__dict__",
                           "named_children_walk", "_super_module_initialized"}

    def __init__(self, mod: Module, dynamo_ctx):
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx
        self._torchdynamo_orig_callable = mod.forward
        frame = dynamo_ctx.frame(None, mod) if isinstance(dynamo_ctx, OptimizeContext) else None
        self.__dict__["_frame"] = frame

    def forward(self, *args, **kwargs):
        """Run the original module through its compiled frame (under ``disable``: as it
        is, its hooks included)."""
        frame = self.__dict__.get("_frame")
        if frame is None:
            return self._orig_mod(*args, **kwargs)
        return frame(*args, **kwargs)

    @property
    def training(self):
        """The original module's training flag."""
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if "_orig_mod" in self.__dict__.get("_modules", {}):
            self._orig_mod.training = value

    def __getattr__(self, name):
        if name == "_modules" or name.startswith("__"):
            raise AttributeError(name)      # not initialised yet (e.g. while unpickling)
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, val):
        if name in OptimizedModule._opt_mod_attributes or "_orig_mod" not in self.__dict__.get(
                "_modules", {}):
            return super().__setattr__(name, val)
        return setattr(self._orig_mod, name, val)
