"""Stochastic Weight Averaging and EMA helpers (torch.optim.swa_utils)."""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from .. import _ops  # noqa: F401  (tensor methods)
from .._core import dtype as _dt
from .._core.backend import xp
from .._tensor import _wrap
from ..autograd import grad_mode as _gm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import _lerp_, _real

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _is_float(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _lerp_into(avg, cur, w):
    _lerp_(_real(avg._data), _real(cur._data), w)
    avg._bump_version()


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ``ema = lerp(ema, current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @_gm.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _is_float(ema_param_list[0]):
            for e, c in zip(ema_param_list, current_param_list):
                _lerp_into(e, c, 1 - decay)
        else:
            for e, c in zip(ema_param_list, current_param_list):
                e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors."""
    @_gm.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = num_averaged.item() if hasattr(num_averaged, "item") else num_averaged
        if _is_float(averaged_param_list[0]):
            for a, c in zip(averaged_param_list, current_param_list):
                _lerp_into(a, c, 1 / (n + 1))
        else:
            # torch's integer path (addcdiv / add with a float alpha) rejects integer tensors
            raise RuntimeError("Integer division with addcdiv is no longer supported: the "
                               "running mean cannot be kept in an integer tensor "
                               f"({averaged_param_list[0].dtype})")
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @_gm.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor: returns ``avg + (current - avg) / (n + 1)``."""
    @_gm.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters hold a running (SWA) or exponential average."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        self.register_buffer("n_averaged", _wrap(xp.array(0, dtype=_dt.int64.np)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers if ``use_buffers``) into the
        average."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param = self.parameters()
            model_param = model.parameters()
        mine, theirs = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(self_param, model_param):
            pm = p_model.detach()
            mine.append(p_avg.detach())
            theirs.append(pm)
            if copy_param:
                p_avg.detach().copy_(pm)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                # group by dtype as torch does before calling a multi-tensor function
                groups = {}
                for a, m in zip(mine, theirs):
                    ga, gm = groups.setdefault(a.dtype, ([], []))
                    ga.append(a)
                    gm.append(m)
                for ga, gm in groups.values():
                    if self.multi_avg_fn:
                        self.multi_avg_fn(ga, gm, self.n_averaged)
                    else:
                        fn = get_swa_avg_fn()
                        for a, m in zip(ga, gm):
                            a.copy_(fn(a, m, self.n_averaged))
            else:
                for a, m in zip(mine, theirs):
                    a.detach().copy_(self.avg_fn(a.detach(), m, self.n_averaged))
        if not self.use_buffers:
            # buffers (e.g. BatchNorm statistics) are copied from the current model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach())
        self.n_averaged += 1


@_gm.no_grad()
def update_bn(loader, model, device=None):
    """Recompute BatchNorm running statistics with one pass over ``loader``."""
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # cumulative average over the whole pass
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _is_batchnorm(module):
    try:
        from ..nn.modules.batchnorm import _BatchNorm
    except ImportError:  # BatchNorm not available: recognise it by its interface
        return hasattr(module, "reset_running_stats") and hasattr(module, "momentum")
    return isinstance(module, _BatchNorm)


class SWALR(LRScheduler):
    """Anneal each group's lr to a fixed ``swa_lr`` over ``anneal_epochs``, then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
