"""torchdiffeq: odeint with several solvers, the adjoint method, and event handling."""

from importlib.metadata import version as _dist_version

import torch
from torchdiffeq import odeint, odeint_adjoint, odeint_event

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("torchdiffeq")


class Field(torch.nn.Module):
    """dy/dt = tanh(W y) - y/2, a small learned vector field."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, t, y):
        return torch.tanh(self.lin(y)) - 0.5 * y + 0.1 * t


@case
def solvers(ctx):
    """dopri5 (adaptive), rk4 and euler (fixed), and gradients through the solve."""
    f = ctx.weights(Field(), "field")
    y0 = randn(0, 2, 3)
    t = torch.linspace(0, 1, 5)
    out = {"dopri5": odeint(f, y0, t, rtol=1e-6, atol=1e-8),
           "rk4": odeint(f, y0, t, method="rk4", options={"step_size": 0.05}),
           "euler": odeint(f, y0, t, method="euler", options={"step_size": 0.1}),
           "bosh3": odeint(f, y0, t, method="bosh3", rtol=1e-5, atol=1e-7)}
    out["dopri5"].pow(2).sum().backward()
    out["grad.weight"] = f.lin.weight.grad
    return out


@case
def adjoint(ctx):
    """odeint_adjoint's gradients (from solving backwards in time)."""
    f = ctx.weights(Field(), "field")
    y0 = randn(0, 2, 3).requires_grad_()
    t = torch.linspace(0, 1, 4)
    ys = odeint_adjoint(f, y0, t, rtol=1e-7, atol=1e-9)
    ys[-1].sum().backward()
    return {"ys": ys, "grad.y0": y0.grad, "grad.weight": f.lin.weight.grad}


@case
def event(ctx):
    """odeint_event: integrate a falling body until it hits the ground."""
    def fall(t, state):
        pos, vel = state
        return vel, torch.full_like(vel, -9.81)

    def hit(t, state):
        return state[0]

    state0 = (torch.tensor([10.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64))
    t_event, final = odeint_event(fall, state0, torch.tensor(0.0, dtype=torch.float64),
                                  event_fn=hit, rtol=1e-8, atol=1e-10)
    return {"t_event": t_event, "final_velocity": final[1]}
