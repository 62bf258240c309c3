"""SparseAdam: lazy Adam for sparse gradients.

glasstorch has no sparse tensor layout, so every gradient is dense and ``step`` raises
torch's error for dense gradients; construction and its checks behave as in torch."""

from __future__ import annotations

from .optimizer import Optimizer, _call_closure, _no_grad_step

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam (torch.optim.SparseAdam)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[gi, pi] for gi, g in enumerate(self.param_groups)
                          for pi, p in enumerate(g["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step (needs sparse gradients)."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss
