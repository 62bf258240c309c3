"""The pitfall checks, called from the hooks only while the detector is on."""

from __future__ import annotations

import linecache
import os
import sys
import warnings
import weakref

import numpy as _np

import glasstorch as _gt

from .. import debug as _debug
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from . import GlasstorchPitfallWarning

_PKG = os.path.dirname(os.path.abspath(_gt.__file__)) + os.sep
_EXAMPLES = _PKG + "examples" + os.sep
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
_seen = set()


def _internal(filename):
    """Frames that are not the user's: glasstorch itself (but its examples are user code) and
    the standard library (contextlib/functools wrappers between the user and us)."""
    if filename.startswith(_PKG):
        return not filename.startswith(_EXAMPLES)
    return filename.startswith(_STDLIB) and "site-packages" not in filename


def user_frame(depth=1):
    f = sys._getframe(depth)
    while f is not None and _internal(os.path.abspath(f.f_code.co_filename)):
        f = f.f_back
    return f


def caller_is_internal(depth):
    return _internal(os.path.abspath(sys._getframe(depth + 1).f_code.co_filename))


def warn(code, message, fix, frame=None):
    """Emit ``code`` once per user source line."""
    if isinstance(frame, tuple):  # (filename, lineno, globals) captured earlier
        filename, lineno, module_globals = frame
    else:
        f = frame if frame is not None else user_frame(2)
        if f is None:
            filename, lineno, module_globals = "<unknown>", 0, None
        else:
            filename, lineno, module_globals = f.f_code.co_filename, f.f_lineno, f.f_globals
    key = (code, filename, lineno)
    if key in _seen:
        return
    _seen.add(key)
    source = linecache.getline(filename, lineno, module_globals).strip()
    w = GlasstorchPitfallWarning(code, message, fix, filename, lineno, source)
    warnings.warn_explicit(w, GlasstorchPitfallWarning, filename, lineno,
                           module_globals.get("__name__") if module_globals else None,
                           module_globals=module_globals)


def _shape(t):
    return tuple(t.shape)


# ---------------------------------------------------------------------------- optimizer
class _StaleGradHook:
    """Tensor hook on a parameter: when backward first reaches it after a step, the grad still
    being the very object (same version) that step consumed means nobody cleared it."""

    __slots__ = ("param", "used")

    def __init__(self, param):
        self.param = weakref.ref(param)
        self.used = None

    def __call__(self, grad):
        used = self.used
        if used is not None:
            self.used = None
            p = self.param()
            if p is not None and _debug._on:
                g = p._grad
                if g is not None and g is used[0]() and g._version == used[1]:
                    p.__dict__["_gt_stale"] = True
        return None


_step_count = 0
_tracked_losses = []  # (step number, weakref to the loss's grad_fn, filename, lineno)


def _params(opt):
    return [p for group in opt.param_groups for p in group["params"]]


def optimizer_built(opt):
    opt.__dict__["_gt_trainable_at_build"] = {id(p) for p in _params(opt) if p.requires_grad}


def before_step(opt):
    global _step_count
    _step_count += 1
    params = _params(opt)
    if not any(p.requires_grad for p in params):
        warn("GT006", f"{type(opt).__name__}.step(): the optimizer holds no trainable parameter "
             "(every parameter has requires_grad=False), so it changes nothing.",
             "build the optimizer from the parameters you want to train, after setting "
             "requires_grad on them.")
    built = opt.__dict__.get("_gt_trainable_at_build")
    if built is None:
        optimizer_built(opt)
    else:
        frozen = sum(1 for p in params if id(p) in built and not p.requires_grad)
        if frozen:
            warn("GT007", f"{frozen} parameter(s) were frozen (requires_grad=False) after "
                 f"{type(opt).__name__} was built; they stay in the optimizer, whose momentum, "
                 "weight decay or stale grads can keep changing them.",
                 "freeze first, then build the optimizer from "
                 "[p for p in model.parameters() if p.requires_grad].")
    stale = 0
    for p in params:
        d = p.__dict__
        if d.get("_gt_stale"):
            del d["_gt_stale"]
            stale += 1
    if stale:
        warn("GT001", f"{type(opt).__name__}.step(): gradients of {stale} parameter(s) were "
             "accumulated on top of gradients already used by the previous step(); "
             "zero_grad() was not called in between, so every step also replays old gradients.",
             "call optimizer.zero_grad() once per iteration (before loss.backward()).")
    _check_loss_leak()


def after_step(opt):
    for p in _params(opt):
        g = p._grad
        if g is None or not p._requires_grad or p.grad_fn is not None:
            continue
        d = p.__dict__
        hook = d.get("_gt_stale_hook")
        if hook is None:
            hook = d["_gt_stale_hook"] = _StaleGradHook(p)
            p.register_hook(hook)
        hook.used = (weakref.ref(g), g._version)


def track_loss(loss):
    """Remember the graph of a loss made in grad mode, to notice when old ones stay alive."""
    fn = loss.grad_fn
    if fn is None:
        return loss
    if len(_tracked_losses) >= 64:
        del _tracked_losses[:32]
    f = user_frame(2)
    _tracked_losses.append((_step_count, weakref.ref(fn), f.f_code.co_filename if f else "?",
                            f.f_lineno if f else 0))
    return loss


def _check_loss_leak():
    # Losses made two or more steps ago are normally gone (the ``loss`` variable was rebound);
    # several of them still alive means something (``total += loss``, a list) holds their graphs.
    live = [e for e in _tracked_losses if e[1]() is not None]
    _tracked_losses[:] = live
    old = [e for e in live if e[0] <= _step_count - 2]
    if len(old) >= 3:
        where = f"{old[-1][2]}:{old[-1][3]}"
        warn("GT002", f"the graphs of {len(old)} losses from earlier iterations (made at {where}) "
             "are still alive: a loss is being accumulated (e.g. total_loss += loss) or stored "
             "with its graph, so memory grows every step.",
             "accumulate loss.item() or loss.detach() instead of loss.")
        _tracked_losses.clear()


# ---------------------------------------------------------------------------- modules
_depth = 0
_nonfinite_reported = False


def _training_stochastic(mod):
    from ..nn.modules.batchnorm import _BatchNorm
    from ..nn.modules.dropout import _DropoutNd
    for m in mod.modules():
        if m.training and ((isinstance(m, _DropoutNd) and m.p > 0) or isinstance(m, _BatchNorm)):
            return m
    return None


def _nonfinite(obj):
    if isinstance(obj, Tensor):
        a = obj._data
        return a.dtype.kind in "fc" and a.size and not _np.isfinite(a).all()
    if isinstance(obj, (tuple, list)):
        return any(_nonfinite(o) for o in obj)
    if isinstance(obj, dict):
        return any(_nonfinite(o) for o in obj.values())
    return False


def module_call(mod, args, kwargs):
    global _depth, _nonfinite_reported
    if _depth == 0:
        _nonfinite_reported = False
        if not _grad_state.grad_enabled and mod.training and not caller_is_internal(2):
            m = _training_stochastic(mod)
            if m is not None:
                warn("GT003", f"{type(mod).__name__} is called under no_grad while in training "
                     f"mode: its {type(m).__name__} still {'drops activations' if 'Dropout' in type(m).__name__ else 'uses batch statistics and updates its running stats'}, "  # noqa: E501
                     "so evaluation results are noisy and wrong.",
                     "call model.eval() before evaluating (and model.train() after).")
    _depth += 1
    try:
        out = mod._call_undebugged(args, kwargs)
    finally:
        _depth -= 1
    if not _nonfinite_reported and _nonfinite(out) and not _nonfinite(args) \
            and not _nonfinite(kwargs):
        _nonfinite_reported = True
        warn("GT013", f"NaN/Inf first appears in the output of {type(mod).__name__} "
             f"({_describe_module(mod)}) although its inputs are finite.",
             "look at this module's forward (log/sqrt/division of values near 0, overflow in "
             "exp, a too-large learning rate making weights blow up); torch.autograd."
             "detect_anomaly() finds the backward side.")
    return out


def _describe_module(mod):
    r = repr(mod).splitlines()
    return r[0] if len(r) == 1 else r[0] + "...)"


def module_setattr(mod, name, value):
    from ..nn.modules.module import Module
    from ..nn.parameter import Parameter
    if caller_is_internal(3):
        return
    if isinstance(value, Tensor):
        if value._requires_grad and value.grad_fn is None and not isinstance(value, Parameter):
            warn("GT004", f"{type(mod).__name__}.{name} is a tensor with requires_grad=True but "
                 "not an nn.Parameter: it is not in .parameters(), state_dict() or .to(), so "
                 "the optimizer never trains it.",
                 f"self.{name} = nn.Parameter(tensor) (or register_buffer for a constant).")
    elif isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        kinds = {type(v).__name__ for v in items if isinstance(v, (Module, Parameter))}
        if kinds:
            holder = "nn.ModuleDict" if isinstance(value, dict) else "nn.ModuleList"
            if "Parameter" in kinds and len(kinds) == 1:
                holder = "nn.ParameterDict" if isinstance(value, dict) else "nn.ParameterList"
            warn("GT005", f"{type(mod).__name__}.{name} is a plain {type(value).__name__} "
                 "holding modules/parameters: they are invisible to .parameters(), "
                 "state_dict(), .to() and .train()/.eval(), so they are never trained or saved.",
                 f"self.{name} = {holder}(...)")


# ---------------------------------------------------------------------------- losses
def _rows_sum_to_one(a, axis):
    return bool(_np.allclose(a.sum(axis=axis, dtype=_np.float64), 1.0, atol=1e-3))


def cross_entropy_input(input, target, ignore_index):
    a = input._data
    if a.dtype.kind != "f" or a.ndim == 0 or a.size == 0:
        return
    axis = 0 if a.ndim == 1 else 1
    if a.shape[axis] < 2:
        return
    probs_target = _shape(input) == _shape(target)
    if probs_target and target._data.dtype.kind == "f":
        t = target._data
        if ((t == 0) | (t == 1)).all() and _rows_sum_to_one(t, axis):
            warn("GT010", "cross_entropy got a one-hot float target; it is read as class "
                 "probabilities, which costs more and disables ignore_index.",
                 f"pass class indices: target.argmax({axis}).")
    elif not probs_target and target._data.dtype.kind == "f":
        warn("GT010", f"cross_entropy got a floating-point target of shape {_shape(target)}: "
             "class indices must be an integer (int64) tensor, and probabilities must have the "
             f"input's shape {_shape(input)}.",
             "pass target.long() (class indices) or a (N, C) probability target.")
    elif not probs_target and target._data.dtype.kind in "iu":
        _labels_in_range(target, a.shape[axis], ignore_index, "cross_entropy")
    mn, mx = a.min(), a.max()
    if mn >= 0 and mx <= 1 and _rows_sum_to_one(a, axis):
        warn("GT008", "the input of cross_entropy already sums to 1 along the class dim: it "
             "looks like softmax output, but cross_entropy applies log_softmax itself, so the "
             "loss is squashed and gradients vanish.",
             "pass the raw logits (drop the softmax before CrossEntropyLoss).")
    elif mx <= 0 and _rows_sum_to_one(_np.exp(a.astype(_np.float64)), axis):
        warn("GT008", "the input of cross_entropy is already log-probabilities (log_softmax "
             "output): cross_entropy applies log_softmax itself, so that work is done twice.",
             "pass the raw logits, or use nll_loss on log_softmax output.")


def nll_loss_input(input, target, ignore_index):
    a = input._data
    if a.dtype.kind != "f" or a.ndim == 0 or a.size == 0:
        return
    axis = 0 if a.ndim == 1 else 1
    if target._data.dtype.kind in "iu":
        _labels_in_range(target, a.shape[axis], ignore_index, "nll_loss")
    if a.shape[axis] >= 2 and not _rows_sum_to_one(_np.exp(a.astype(_np.float64)), axis):
        warn("GT009", "the input of nll_loss is not log-probabilities (exp of a row does not sum "
             "to 1): nll_loss only picks -input[target], so raw logits or probabilities give a "
             "meaningless loss.",
             "apply log_softmax first (or use cross_entropy on the raw logits).")


def _labels_in_range(target, n_classes, ignore_index, fn):
    t = target._data
    if t.size == 0:
        return
    t = t[t != ignore_index]
    if t.size == 0:
        return
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi >= n_classes:
        hint = " (labels look 1-based: subtract 1)" if lo >= 1 and hi == n_classes else ""
        warn("GT011", f"{fn}: target labels span [{lo}, {hi}] but the input has {n_classes} "
             f"classes, so labels must lie in [0, {n_classes - 1}]{hint}.",
             "map labels to 0..C-1, or give the last layer as many outputs as there are "
             "classes.")


def loss_shapes(input, target):
    si, st = _shape(input), _shape(target)
    try:
        b = _np.broadcast_shapes(si, st)
    except ValueError:
        return
    if b != si or b != st:
        ni = int(_np.prod(si)) if si else 1
        nb = int(_np.prod(b)) if b else 1
        if nb > ni or b != si:
            warn("GT012", f"loss input of shape {si} and target of shape {st} broadcast to {b}: "
                 "every prediction is compared with every target (e.g. (N,1) vs (N,) gives an "
                 "(N,N) matrix), not element by element.",
                 "make the shapes equal, e.g. output.squeeze(-1) or target.view_as(output).")


# ---------------------------------------------------------------------------- data
def sampler_iter(sampler):
    d = sampler.__dict__
    seen = d.setdefault("_gt_epochs_iterated", set())
    if sampler.epoch in seen and not d.get("_gt_set_epoch_called"):
        warn("GT014", f"DistributedSampler iterated again with epoch {sampler.epoch} and "
             "set_epoch() never called: every epoch uses the same shuffle order.",
             "call sampler.set_epoch(epoch) at the start of each epoch.")
    seen.add(sampler.epoch)


_SEED_TARGETS = (
    ("numpy.random.seed", _np.random, "seed"),
    ("random.seed", None, "seed"),
    ("torch.manual_seed", _gt, "manual_seed"),
)


def fetch_watched(it, index):
    """Fetch one batch while the global seeding functions report calls (first batches only)."""
    import random
    calls = []
    saved = []
    for label, mod, attr in _SEED_TARGETS:
        mod = random if mod is None else mod
        orig = getattr(mod, attr, None)
        if orig is None:
            continue

        def spy(*a, _orig=orig, _label=label, **k):
            f = user_frame(2)
            calls.append((_label, (f.f_code.co_filename, f.f_lineno, f.f_globals) if f else
                          ("<unknown>", 0, None)))
            return _orig(*a, **k)

        saved.append((mod, attr, orig))
        setattr(mod, attr, spy)
    try:
        return it._dataset_fetcher.fetch(index)
    finally:
        for mod, attr, orig in saved:
            setattr(mod, attr, orig)
        for label, frame in calls:
            warn("GT015", f"the Dataset calls {label}() while loading items: every item (and "
                 "every worker) restarts the global random stream, so random augmentations "
                 "repeat.",
                 "seed once at program start (and per worker in worker_init_fn); use a local "
                 "numpy.random.default_rng / torch.Generator if an item needs its own stream.",
                 frame)

