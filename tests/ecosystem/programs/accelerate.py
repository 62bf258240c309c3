"""accelerate: prepare/backward/accumulate/clip, save_state and load_state on CPU."""

import os

import accelerate
import torch
from accelerate import Accelerator
from torch import nn

from .._support import case, randn, sample


def version():
    """The version of the library under test."""
    return accelerate.__version__


def _model():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def _loader():
    x = randn(0, 16, 6)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    # shuffle=False: the sampler order must not depend on the RNG the comparison lacks
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)


def _epoch(accelerator, model, opt, sched, loader):
    losses = []
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
        losses.append(accelerator.gather_for_metrics(loss.detach()).mean())
    return torch.stack(losses)


@case
def train_save_load(ctx):
    """One epoch, save_state, another epoch; a fresh Accelerator loads the state and repeats it."""
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
    model = ctx.weights(_model(), "mlp")
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
    model, opt, loader, sched = accelerator.prepare(model, opt, _loader(), sched)
    out = {"epoch1": _epoch(accelerator, model, opt, sched, loader),
           "device": str(accelerator.device), "num_processes": accelerator.num_processes,
           "mixed_precision": str(accelerator.mixed_precision)}
    folder = ctx.tmpdir("state")
    accelerator.save_state(folder)
    out["saved_files"] = ",".join(sorted(os.listdir(folder)))
    out["epoch2"] = _epoch(accelerator, model, opt, sched, loader)
    out["weight_after"] = sample(accelerator.unwrap_model(model)[0].weight)

    again = Accelerator(cpu=True, gradient_accumulation_steps=2)
    model2 = _model()
    opt2 = torch.optim.AdamW(model2.parameters(), lr=0.05)
    sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=1, gamma=0.9)
    model2, opt2, loader2, sched2 = again.prepare(model2, opt2, _loader(), sched2)
    again.load_state(folder)
    out["resumed_lr"] = opt2.param_groups[0]["lr"]
    out["epoch2_resumed"] = _epoch(again, model2, opt2, sched2, loader2)
    out["weight_resumed"] = sample(again.unwrap_model(model2)[0].weight)
    return out
