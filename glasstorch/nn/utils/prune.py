"""Pruning: zero out parts of a module's tensor through a mask, as torch.nn.utils.prune.

Pruning ``module.weight`` moves the parameter to ``weight_orig`` (still a Parameter, the
one an optimizer trains), stores the mask as the buffer ``weight_mask`` and makes
``weight`` a plain attribute ``weight_orig * weight_mask``, recomputed by a forward
pre-hook (the pruning method object itself) before every call. Pruning the same tensor
again combines the methods in a :class:`PruningContainer`, each new method acting only on
what is still unpruned. :func:`remove` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import glasstorch

from ..._ops._libstdcxx import StdSelect

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
    "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
    "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
    "random_structured", "random_unstructured", "remove",
]


class BasePruningMethod(ABC):
    """Base of the pruning methods: a subclass defines ``compute_mask`` (and
    ``PRUNING_TYPE``: ``"unstructured"``, ``"structured"`` or ``"global"``), and gets
    ``apply`` (reparametrize a module's tensor), ``prune`` (mask a bare tensor) and
    ``remove``. An applied method is the module's forward pre-hook for that tensor and
    knows the tensor's name (``_tensor_name``)."""

    _tensor_name: str  # set by ``apply``; unset on a method that was never applied

    def __call__(self, module, inputs):
        """Forward pre-hook: recompute the pruned tensor from ``<name>_orig`` and the mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor ``t`` (same shape), combining this method's choice with
        ``default_mask``, the mask already in place (entries it zeroed stay zero)."""

    def apply_mask(self, module):
        """``module.<name>_orig`` times ``module.<name>_mask``: the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, on top of any pruning
        already applied to it, and return the method now acting as its hook.

        ``importance_scores`` (a tensor shaped like the parameter) replaces the parameter's
        values as what the method ranks.
        """
        method = _combined_method(cls, module, name, args, kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as "
                                     f"parameter {name} of {module}, got "
                                     f"{importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            # the parameter itself becomes <name>_orig; <name> will be the masked product
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = glasstorch.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=glasstorch.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:  # undo the reparametrization: the module is as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes for it (ranked by
        ``importance_scores`` when given), without touching any module."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = glasstorch.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes again a Parameter, holding the
        pruned values; ``<name>_orig`` and ``<name>_mask`` are deleted. The hook itself is
        unregistered by the module-level :func:`remove`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 f"removed")
        pruned = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = pruned.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _combined_method(cls, module, name, args, kwargs):
    """A new ``cls`` method for ``module.<name>``, merged with the pruning hook already on
    that tensor (which is unregistered: ``apply`` registers the result)."""
    old, keys = None, []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(key)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for key in keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    if old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied one after the other to one tensor; its mask
    is the previous mask refined by the last method on the part still unpruned."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method`` (a pruning method acting on this container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the last method's mask written over the entries it may
        still prune: the unpruned entries (unstructured), the channels not yet entirely
        pruned along its ``dim`` (structured) or everything (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            region = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     'have the attribute `dim` defined.')
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            alive = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            region = tuple(alive if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            region = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        part = method.compute_mask(t[region], default_mask=default_mask[region])
        new_mask[region] = part.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """A pruning method that prunes nothing (the mask is all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Reparametrize ``module.<name>`` with an all-ones mask."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` entries (a count, or a fraction of the tensor) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with ``amount`` random entries of ``t`` set to zero."""
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone(memory_format=glasstorch.contiguous_format)
        if k != 0:
            scores = glasstorch.rand_like(t)
            mask.view(-1)[glasstorch.topk(scores.view(-1), k=k).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` entries (a count, or a fraction) of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the ``amount`` entries of smallest ``|t|`` set to zero."""
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone(memory_format=glasstorch.contiguous_format)
        if k != 0:
            mask.view(-1)[_topk_indices(glasstorch.abs(t).view(-1), k, largest=False)] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``)
        of smallest magnitude."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels (slices along ``dim``) chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` with ``amount`` random channels of ``t`` along ``dim`` zeroed."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, channels)
        _validate_pruning_amount(k, channels)
        if k == 0:
            return default_mask
        scores = glasstorch.rand(channels)
        threshold = glasstorch.kthvalue(scores, k=k).values
        mask = _channel_mask(t, self.dim, scores > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels (slices along ``dim``) of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the channels of ``t`` of smallest norm along ``dim``
        zeroed."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, channels)
        _validate_pruning_amount(k, channels)
        norm = _compute_norm(t, self.n, self.dim)
        # torch ranks the channels to keep (largest norms), not the ones to prune: with
        # ties that is a different choice, so do the same
        keep = _topk_indices(norm, channels - k, largest=True)
        if k == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
        L``n`` norm (of ``importance_scores`` when given)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given mask (multiplied into the mask already in place)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """``default_mask`` times the given mask."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def _channel_mask(t, dim, which):
    """Zeros shaped like ``t`` with ones in the channels along ``dim`` that ``which``
    selects (a boolean mask or indices)."""
    mask = glasstorch.zeros_like(t)
    mask[tuple(which if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


def identity(module, name):
    """Reparametrize ``module.<name>`` as pruned with an all-ones mask; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>`` (an int: that many; a float in
    [0, 1]: that fraction); returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value (of
    ``importance_scores`` when given); returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``; returns
    ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest L``n``
    norm (``n`` as ``torch.norm``'s ``p``); returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune several tensors together: ``parameters`` is an iterable of ``(module, name)``
    pairs, ranked as one flattened vector by ``pruning_method(**kwargs)`` (an unstructured
    method class, e.g. ``L1Unstructured`` with ``amount``), each then pruned with its part of
    the mask. ``importance_scores`` maps ``(module, name)`` to scores replacing the values.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    from .convert_parameters import parameters_to_vector
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([
        getattr(module, name + "_mask", glasstorch.ones_like(getattr(module, name)))
        for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f'Found method {pruning_method} of type {method.PRUNING_TYPE}')
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + count].view_as(param))
        start += count


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given ``mask``; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and drop its hook, ``<name>_orig``
    and ``<name>_mask``; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module):
    """Whether ``module`` or any submodule carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


# ------------------------------------------------------------------------------ helpers

def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         f"non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return glasstorch.norm(t, p=n, dim=dims)


def _topk_indices(values, k, largest):
    """Indices of the ``k`` largest (smallest) entries of the 1-D ``values``, chosen among
    equal values as torch's CPU ``topk`` chooses them.

    glasstorch's ``topk`` prefers the lowest index among equal values; torch's kernel runs
    ``std::partial_sort`` (when ``64 * k <= n``) or ``std::nth_element`` over (value, index)
    pairs comparing values only, so which of several equal values make the cut depends on
    how those algorithms move elements. Only when equal values straddle the cut does that
    matter; then the libstdc++ algorithms are replayed on the values.
    """
    if k == 0:
        return glasstorch.zeros(0, dtype=glasstorch.int64)
    chosen = glasstorch.topk(values, k, largest=largest)
    kth = chosen.values[-1]
    if not bool(glasstorch.isnan(values).any()):
        beyond = (values > kth) if largest else (values < kth)
        if int(beyond.sum()) + int((values == kth).sum()) == k:
            return chosen.indices  # no tie at the cut: every algorithm picks this set
    return glasstorch.tensor(StdSelect(values.tolist(), largest).first(k),
                             dtype=glasstorch.int64)
