"""The pitfall checks, called from the hooks only while the detector is on."""

from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import linecache
import os
import pickle
import random
import sys
import types
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


@functools.cache
def _internal(code_filename):
    """Frames that are not the user's: glasstorch itself (but its examples are user code) and
    the standard library (contextlib/functools wrappers between the user and us)."""
    filename = os.path.abspath(code_filename)
    if filename.startswith(_PKG):
        return not filename.startswith(_EXAMPLES)
    return filename.startswith(_STDLIB) and "site-packages" not in filename


def user_frame(depth=1):
    f = sys._getframe(depth)
    while f is not None and _internal(f.f_code.co_filename):
        f = f.f_back
    return f


def caller_is_internal(depth):
    return _internal(sys._getframe(depth + 1).f_code.co_filename)


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


# ---------------------------------------------------------------------------- workers' RNGs
_GLOBAL_RNGS = (
    ("NumPy's global RNG (np.random.*)", lambda: _np.random.get_state(legacy=False)),
    ("Python's random module", random.getstate),
    ("glasstorch's default generator (torch.rand*)",
     lambda: _gt.default_generator.get_state()._data.tobytes()),
)
_RNG_TYPES = (_np.random.Generator, _np.random.RandomState, random.Random, _gt.Generator)
# Never searched for generators: data, text, numbers, code.
_LEAF_TYPES = (Tensor, _np.ndarray, str, bytes, int, float, complex, type, types.ModuleType,
               types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _rng_state(rng):
    if isinstance(rng, _np.random.Generator):
        return rng.bit_generator.state
    if isinstance(rng, _np.random.RandomState):
        return rng.get_state(legacy=False)
    if isinstance(rng, random.Random):
        return rng.getstate()
    return rng.get_state()._data.tobytes()


def _fingerprint(state):
    # A digest, not hash(): it must agree between processes (spawned ones hash differently).
    return hashlib.blake2b(pickle.dumps(state, protocol=4), digest_size=12).digest()


def _held_rngs(dataset, max_objects=256, max_depth=4):
    """(path, generator) for the random generators reachable from the dataset's attributes
    (``self.rng``, ``self.transform.rng``, a list of transforms...), global ones excluded."""
    skip = {id(_np.random.mtrand._rand), id(random._inst), id(_gt.default_generator)}
    found, todo = [], [("dataset", dataset, 0)]
    while todo and len(skip) < max_objects:
        path, obj, depth = todo.pop()
        if id(obj) in skip or isinstance(obj, _LEAF_TYPES):
            continue
        skip.add(id(obj))
        if isinstance(obj, _RNG_TYPES):
            found.append((path, obj))
        elif depth < max_depth:
            todo.extend((p, v, depth + 1) for p, v in _children(path, obj))
    return found


def _children(path, obj):
    if isinstance(obj, dict):
        return [(f"{path}[{k!r}]", v) for k, v in itertools.islice(obj.items(), 64)]
    if isinstance(obj, (list, tuple)):
        return [(f"{path}[{i}]", v) for i, v in enumerate(obj[:64])]
    attrs = getattr(obj, "__dict__", None)
    return [(f"{path}.{k}", v) for k, v in attrs.items()] if isinstance(attrs, dict) else []


def fetch_watching_rngs(fetcher, index, worker_id, data_queue, report_type):
    """A worker's first fetch: which generators did the dataset draw from, and in which state
    did each start? The report goes to the main process ahead of the batch."""
    try:
        watched = [(label, "global", get) for label, get in _GLOBAL_RNGS]
        watched += [(f"{type(rng).__name__} {path}", "held", functools.partial(_rng_state, rng))
                    for path, rng in _held_rngs(fetcher.dataset)]
        before = [_fingerprint(get()) for _, _, get in watched]
    except Exception:  # a dataset the walk cannot read must still load
        return fetcher.fetch(index)
    data = fetcher.fetch(index)
    drawn = [(label, kind, fp) for (label, kind, get), fp in zip(watched, before)
             if _fingerprint(get()) != fp]
    if drawn:
        data_queue.put((report_type(worker_id, drawn), None))
    return data


_iterators = itertools.count()
# (id(dataset), label, fingerprint) -> (weakref to the dataset, serial of the iterator that
# first reported that start state)
_held_starts = {}


def worker_rngs(it, report):
    """Main process: compare the start states workers report (across workers and epochs)."""
    d = it.__dict__
    serial = d.setdefault("_gt_serial", next(_iterators))
    starts = d.setdefault("_gt_rng_starts", {})
    for label, kind, fp in report.rngs:
        first = starts.setdefault((label, fp), report.worker_id)
        if first != report.worker_id:
            a, b = sorted((first, report.worker_id))
            warn("GT016", f"DataLoader workers {a} and {b} start {label} in the same state, "
                 "and the Dataset draws from it while loading items: the workers produce "
                 "identical random augmentations.", _rng_fix(kind))
        if kind == "held" and _held_start_seen_before(it._dataset, label, fp, serial):
            warn("GT016", f"{label} starts every epoch in the same state in the DataLoader "
                 "workers: it lives in the Dataset, whose copy in the main process never "
                 "advances, so the fresh workers of each epoch replay the same random "
                 "augmentations.", _rng_fix(kind))


def _held_start_seen_before(dataset, label, fp, serial):
    """Whether an earlier iterator over ``dataset`` reported this start state already."""
    try:
        ref = weakref.ref(dataset)
    except TypeError:
        return False
    key = (id(dataset), label, fp)
    seen = _held_starts.get(key)
    if seen is None or seen[0]() is not dataset:
        if len(_held_starts) > 1024:
            _held_starts.clear()
        _held_starts[key] = (ref, serial)
        return False
    return seen[1] != serial


def _rng_fix(kind):
    if kind == "global":
        return ("seed it from the worker's own seed in worker_init_fn (e.g. "
                "np.random.seed(torch.utils.data.get_worker_info().seed % 2**32)), not with a "
                "constant; DataLoader already reseeds NumPy, random and torch per worker.")
    return ("create the generator per worker in worker_init_fn (info = torch.utils.data."
            "get_worker_info(); info.dataset.rng = np.random.default_rng(info.seed)), or draw "
            "from torch's RNG (torch.rand, torch.randint), which DataLoader reseeds per worker "
            "and per epoch.")


# ---------------------------------------------------------------------------- implicit copies
_COPY_MIN_BYTES = 1 << 20  # smaller copies cost less than the Python around them
_COPY_MIN_STEPS = 3        # seen in this many optimizer steps = a copy inside the training loop


class _CopySite:
    """What one user line copied: in which optimizer steps, and whether always the same data."""

    __slots__ = ("steps", "root", "same_root")

    def __init__(self, root):
        self.steps = set()
        self.root = weakref.ref(root)
        self.same_root = True


_copies = {}  # (filename, lineno) -> _CopySite


def _user_and_entry(depth):
    """The first user frame above ``depth`` and the glasstorch function it called."""
    f, entry, inner = sys._getframe(depth), None, None
    while f is not None and _internal(f.f_code.co_filename):
        f, entry, inner = f.f_back, f, entry
    if (entry is not None and inner is not None
            and os.path.abspath(entry.f_code.co_filename) == _DISPATCH_FILE):
        entry = inner  # the user called a public dispatch point; the op is the function inside
    return f, entry


_DISPATCH_FILE = os.path.join(_PKG, "overrides.py")


@functools.cache
def _copy_entries():
    from .._ops import copying, views
    return {views.reshape.__code__, views.reshape_as.__code__, views.flatten.__code__,
            copying.contiguous.__code__}


def implicit_copy(input):
    """reshape/flatten/contiguous are about to copy a non-contiguous ``input``."""
    if input._data.nbytes < _COPY_MIN_BYTES:
        return
    f, entry = _user_and_entry(2)
    # Only copies the user asked for: glasstorch's own kernels copy by design.
    if f is None or entry is None or entry.f_code not in _copy_entries():
        return
    root = input._base if input._base is not None else input
    key = (f.f_code.co_filename, f.f_lineno)
    site = _copies.get(key)
    if site is None:
        if len(_copies) > 1024:
            _copies.clear()
        site = _copies[key] = _CopySite(root)
    site.same_root = site.same_root and site.root() is root
    if len(site.steps) < _COPY_MIN_STEPS:
        site.steps.add(_step_count)
        if len(site.steps) == _COPY_MIN_STEPS:
            _warn_copy(entry.f_code.co_name, input, site.same_root, f)


def _warn_copy(op, input, same_root, frame):
    mb = input._data.nbytes / 2**20
    fix = ("copy it once before the loop (x = x.contiguous()) and use that copy every step."
           if same_root else
           "produce the tensor in the layout this line needs (change the layout once, where it "
           "is made), or use an op that takes the strides as they are (matmul, einsum and "
           "elementwise ops accept transposed operands without a copy).")
    warn("GT017", f"{op}() copies a non-contiguous tensor of shape {_shape(input)} with strides "
         f"{input.stride()} ({mb:.1f} MB per call) in every training step (seen in "
         f"{_COPY_MIN_STEPS} steps){', the same data each time' if same_root else ''}.",
         fix, frame)


# ---------------------------------------------------------------------------- host conversions
# Per optimizer step, one line may take this many scalars out of the same graph-holding
# tensor before it warns. Idiomatic code takes one or a few (loss.item(), a handful of
# metrics); a Python loop over the elements of a batch output takes dozens to thousands.
_PULLS_PER_STEP = 16


class _PullCount:
    """Conversions one user line made from one source tensor during one optimizer step."""

    __slots__ = ("source", "step", "count")

    def __init__(self, source):
        self.source = weakref.ref(source)
        self.step = _step_count
        self.count = 0


_pulls = {}  # (filename, lineno, id(source tensor)) -> _PullCount


@functools.cache
def _conversions():
    """The code of each Tensor conversion a user calls, with the name to show."""
    names = {"item": ".item()", "tolist": ".tolist()", "__float__": "float()",
             "__int__": "int()", "__index__": "int()", "__complex__": "complex()",
             "__format__": "format()"}
    return {inspect.unwrap(getattr(Tensor, n)).__code__: shown for n, shown in names.items()}


def host_conversion(t):
    """item()/tolist() (and float()/int() through item) on ``t``."""
    if not t._requires_grad:
        return
    f, entry = _user_and_entry(2)
    name = _conversions().get(entry.f_code) if f is not None else None
    if name is None:  # glasstorch itself converting (printing, schedulers): not the user's
        return
    source = t._base if t._base is not None else t
    key = (f.f_code.co_filename, f.f_lineno, id(source))
    pc = _pulls.get(key)
    if pc is None or pc.source() is not source or pc.step != _step_count:
        if len(_pulls) > 4096:
            _pulls.clear()
        pc = _pulls[key] = _PullCount(source)
    pc.count += 1
    if pc.count == _PULLS_PER_STEP:
        _warn_pulls(name, source, f)


def _warn_pulls(name, source, frame):
    made = type(source.grad_fn).__name__ if source.grad_fn is not None else "a leaf"
    warn("GT018", f"{name} ran {_PULLS_PER_STEP}+ times in one training step on one tensor "
         f"that requires grad or on its elements (shape {_shape(source)}, {made}): taking "
         "values out one at a time costs Python work per value (and a graph node per indexed "
         "element), and each number returned is a constant to autograd (no gradient flows "
         "back through it).",
         "compute on the whole tensor with tensor ops; for logging take the values out once "
         "with t.detach().tolist(); keep values that must stay differentiable as tensors.",
         frame)


def reset_state():
    """Forget what the checks counted (reset() calls it)."""
    _seen.clear()
    _copies.clear()
    _pulls.clear()
    _held_starts.clear()
