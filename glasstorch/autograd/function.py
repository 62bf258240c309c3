"""autograd.Function: user-defined operators with their own backward.

As in torch, the ``ctx`` that ``forward`` and ``backward`` receive is the graph
node itself (an instance of ``<Name>Backward``), so what forward stores on it
is there when backward runs.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

from .._functorch.pyfunctorch import transform_stack
from .._tensor import Tensor, _version_counter_of, _wrap
from .forward_ad import _levels as _dual_levels
from .grad_mode import _state, no_grad
from .graph import Node, SavedTensor, edge_of

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class FunctionCtx:
    """What ``ctx`` offers inside ``forward``/``setup_context``/``backward``."""

    def save_for_backward(self, *tensors):
        """Keep these tensors (inputs or outputs of forward, or None) for ``backward``; read them
        back with ``ctx.saved_tensors``, which checks that none was modified in place since."""
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, unpacked with torch's in-place version check;
        raises once the graph was freed by a backward without ``retain_graph``."""
        packed = self.__dict__.get("_saved_for_backward")
        if packed is None:
            to_save = self.__dict__.get("_to_save", ())
            return tuple(to_save)
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        return tuple(p.unpack(self) if isinstance(p, SavedTensor) else p for p in packed)

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        """Declare the input tensors that ``forward`` modified in place (it must return them); their
        history is rebased onto this node."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that have no gradient (indices, masks); they get ``requires_grad=False``
        and backward receives zeros for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        """With ``True`` (the default), gradients of outputs that did not reach the loss arrive in
        ``backward`` as zero tensors; with ``False`` they arrive as None."""
        self._materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """Graph node of a custom Function; also its ``ctx``."""

    _forward_cls = None

    def __init__(self, next_functions=(), input_meta=()):
        super().__init__(next_functions, input_meta)
        self.needs_input_grad = ()
        self._materialize_grads = True
        self._tensor_positions = ()

    def backward(self, *grads):
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.needs_input_grad)
        if len(result) < n_args or (len(result) > n_args and
                                    any(r is not None for r in result[n_args:])):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n_args}, got {len(result)})")
        out = []
        for pos in self._tensor_positions:
            out.append(result[pos])
        for pos, r in enumerate(result[:n_args]):
            if r is not None and pos not in self._tensor_positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {pos + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        return tuple(out)

    def release_saved(self):
        packed = self.__dict__.get("_saved_for_backward")
        if packed:
            for p in packed:
                if isinstance(p, SavedTensor):
                    p.release()
        self._released = True

    def name(self):
        return type(self).__name__


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward`` and ``backward`` and call ``apply``.

    ``forward(ctx, *args)`` (or ``forward(*args)`` plus ``setup_context(ctx,
    inputs, output)``) computes the result; ``backward(ctx, *grad_outputs)``
    returns one gradient (or None) per forward argument.
    """

    def __init__(self, *args, **kwargs):
        # torch still allows an instance (old code calls ``MyFn().apply(x)``); only calling it
        # like a legacy function is an error
        warnings.warn(f"{type(self)} should not be instantiated: the methods of an autograd "
                      f"Function are static, call them on the class ({type(self).__name__}"
                      f".apply(...)). Instantiating one will be an error in a future torch.",
                      DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The computation, on tensors with graph recording off. Override it as a staticmethod:
        ``forward(ctx, *args)``, or ``forward(*args)`` together with ``setup_context``."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: fill ``ctx`` from ``inputs`` and ``output`` when ``forward`` does not take
        ``ctx``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Override as a staticmethod: given one gradient per output, return one gradient (or None)
        per ``forward`` argument. ``vjp`` is the same method."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode rule: given one tangent per ``forward`` argument (None for
        non-tensors), return one per output. ``autograd.forward_ad`` calls it;
        torch.func.jvp/jacfwd differentiate ``backward`` twice instead, but like torch's
        they refuse a Function that does not override it."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # Either overriding ``vmap`` or setting this declares the Function usable under vmap;
    # glasstorch's vmap runs it once per sample, which is what a generated rule does.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """Batching rule for torch.func.vmap (see ``generate_vmap_rule``)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set "
                                  "generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Call the Function: runs ``forward`` with a fresh ``ctx`` and, when grad mode is on and a
        tensor argument requires grad, records one ``<Name>Backward`` node whose backward is this
        class's ``backward``."""
        if transform_stack:
            _check_transformable(cls)
            if "vmap" in transform_stack:
                from .._functorch.vmap import apply_function
                batched = apply_function(cls, args, kwargs)
                if batched is not None:
                    return batched
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        tensors = [args[i] for i in positions]
        ctx = cls._backward_cls(tuple(edge_of(t) for t in tensors),
                                tuple((t._data.shape, t._data.dtype) for t in tensors))
        ctx._tensor_positions = positions
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        separate_setup = cls.setup_context is not Function.setup_context
        dual = _dual_level_of(cls, args) if _dual_levels else None
        with no_grad(), _forward_ad_paused(dual):
            if separate_setup:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if separate_setup:
            cls.setup_context(ctx, args, output)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        differentiable = _state.grad_enabled and any(ctx.needs_input_grad)
        if not differentiable:
            _mark_dirty_without_graph(ctx)
        else:
            outputs = _connect_outputs(ctx, args, outputs)
            _pack_saved(ctx, outputs)
            output = outputs if is_tuple else outputs[0]
        if dual is not None:
            _attach_tangents(cls, ctx, dual, args, outputs)
        return output


def _dual_level_of(cls, args):
    """The open forward-AD level if a dual tensor is among ``args`` (the Function must then
    have a ``jvp``), else None."""
    level = _dual_levels[-1]
    if not any(level.tangent_of(a) is not None for a in args):
        return None
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    return level


@contextlib.contextmanager
def _forward_ad_paused(level):
    """``forward``'s own ops propagate no tangents: the Function's ``jvp`` gives them."""
    if level is None:
        yield
        return
    level.paused = True
    try:
        yield
    finally:
        level.paused = False


def _attach_tangents(cls, ctx, level, args, outputs):
    from .._ops.creation import zeros_like
    tangents = [None if not isinstance(a, Tensor) else
                (level.tangent_of(a) if level.tangent_of(a) is not None else zeros_like(a))
                for a in args]
    out_t = cls.jvp(ctx, *tangents)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    if len(out_t) != len(outputs):
        raise RuntimeError(f"jvp() returned {len(out_t)} tangents, but forward returned "
                           f"{len(outputs)} outputs")
    for o, t in zip(outputs, out_t):
        if isinstance(o, Tensor) and t is not None:
            level.set_tangent(o, t)


def _check_transformable(cls):
    """torch's refusals of a Function under torch.func transforms."""
    if cls.setup_context is Function.setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if "vmap" in transform_stack and not cls.generate_vmap_rule and \
            cls.vmap is Function.vmap:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           "support. Please override and implement the vmap staticmethod or "
                           "set generate_vmap_rule=True. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if "jvp" in transform_stack and cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")


def _mark_dirty_without_graph(ctx):
    for t in ctx.__dict__.get("_dirty", ()):
        t._bump_version()


def _connect_outputs(ctx, args, outputs):
    dirty = ctx.__dict__.get("_dirty", ())
    non_diff = ctx.__dict__.get("_non_differentiable", ())
    connected = []
    meta = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            connected.append(o)
            meta.append(((), None))
            continue
        if any(o is d for d in dirty):
            if o.grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            o._bump_version()
        elif any(o is a for a in args):
            # returning an input unchanged: hand out an alias that carries the new history
            alias = _wrap(o._data)
            alias._version_counter = _version_counter_of(o)
            o = alias
        meta.append((o._data.shape, o._data.dtype))
        if any(o is n for n in non_diff) or not (o.dtype.is_floating_point or
                                                  o.dtype.is_complex):
            o._requires_grad = False
            connected.append(o)
            continue
        o.grad_fn = ctx
        o._requires_grad = True
        if i:
            o._output_nr = i
        else:
            o.__dict__.pop("_output_nr", None)
        connected.append(o)
    ctx._output_meta = tuple(meta)
    return tuple(connected)


def _pack_saved(ctx, outputs):
    to_save = ctx.__dict__.pop("_to_save", None)
    if to_save is None:
        return
    packed = []
    for i, t in enumerate(to_save):
        if t is None:
            packed.append(t)
        elif isinstance(t, Tensor):
            packed.append(SavedTensor(t, is_output=any(t is o for o in outputs)))
        else:
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                            f"of type {type(t).__name__}")
    ctx._saved_for_backward = tuple(packed)


def once_differentiable(fn):
    """Mark a ``backward`` as not itself differentiable: it runs under no_grad."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
