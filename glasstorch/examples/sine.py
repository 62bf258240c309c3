"""Time-series forecasting: a GRU learns to continue noisy sine waves.

Run with ``python -m glasstorch.examples.sine`` (``--help`` for the flags). Written against
torch's API only: point every ``glasstorch`` import at ``torch``, here and in the digits example
it borrows helpers from, and it runs on PyTorch unchanged (the tests do just that). Takes about
half a minute on one CPU core.

Each series is ``A sin(2 pi t / P + phase)`` plus Gaussian noise, with amplitude, period and
phase drawn at random per series, so the model has to infer them from what it has seen. A GRU
reads the series and a linear head predicts the next value at every step (trained with MSE).
Two tests on held-out series, each against the naive forecast "the next value equals the last
one": one-step-ahead prediction, and a multi-step rollout where the model's own predictions
are fed back in for ``--horizon`` steps after ``--context`` observed ones.

Writes into ``--out`` (default ``./sine_run``): ``sine_gru.pt`` (checkpoint, load with
``torch.load``) and ``rollouts.png`` (a few test rollouts; needs matplotlib).
"""

import argparse
import math
import os
import sys
import time

import glasstorch as torch
import glasstorch.nn as nn
import glasstorch.nn.functional as F
import glasstorch.optim as optim
from glasstorch.examples.digits import _progress
from glasstorch.utils.data import DataLoader, TensorDataset

TEST_SEED = 10_000  # test series come from their own generator, never seen in training
WARMUP = 10  # steps of context before one-step predictions are scored


def make_waves(n, length, noise=0.05, seed=0):
    """(noisy, clean) float32 tensors (n, length): random amplitude in [0.5, 1.5], period in
    [8, 24] steps, phase in [0, 2 pi), plus N(0, noise^2) per point."""
    generator = torch.Generator().manual_seed(seed)

    def uniform(low, high):
        return low + (high - low) * torch.rand((n, 1), generator=generator)

    amplitude, period, phase = uniform(0.5, 1.5), uniform(8, 24), uniform(0, 2 * math.pi)
    t = torch.arange(length, dtype=torch.float32)
    clean = amplitude * torch.sin(2 * math.pi * t / period + phase)
    return clean + noise * torch.randn((n, length), generator=generator), clean


class Forecaster(nn.Module):
    """A GRU over the values seen so far and a linear head giving the next value."""

    def __init__(self, hidden=32, num_layers=1):
        super().__init__()
        self.rnn = nn.GRU(1, hidden, num_layers=num_layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, series, state=None):
        """``series`` (N, T) -> (predicted next values (N, T), final GRU state)."""
        out, state = self.rnn(series.unsqueeze(-1), state)
        return self.head(out).squeeze(-1), state


def one_step_loss(model, series):
    """MSE of the predictions of values 1..T-1 from the values before them."""
    predictions, _ = model(series[:, :-1])
    return F.mse_loss(predictions, series[:, 1:])


def train_step(model, optimizer, series, max_grad_norm=1.0):
    """One Adam step (gradients clipped, as usual for RNNs); returns the loss tensor."""
    loss = one_step_loss(model, series)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss


def rollout(model, context, horizon):
    """Observe ``context`` (N, C), then predict ``horizon`` further values, each fed back in
    as the next input. Returns (N, horizon)."""
    predictions, state = model(context)
    step = predictions[:, -1:]
    forecast = [step]
    for _ in range(horizon - 1):
        step, state = model(step, state)
        forecast.append(step)
    return torch.cat(forecast, dim=1)


def evaluate(model, series, context, horizon):
    """Test MSEs of the model and of the repeat-the-last-value forecast, one-step (after
    ``WARMUP`` steps) and over a ``horizon``-step rollout after ``context`` steps."""
    model.eval()
    with torch.no_grad():
        one_step, _ = model(series[:, :-1])
        forecast = rollout(model, series[:, :context], horizon)
    target, future = series[:, WARMUP + 1:], series[:, context:context + horizon]
    last_seen = series[:, context - 1:context]
    return {
        "one_step_mse": F.mse_loss(one_step[:, WARMUP:], target).item(),
        "one_step_baseline_mse": F.mse_loss(series[:, WARMUP:-1], target).item(),
        "rollout_mse": F.mse_loss(forecast, future).item(),
        "rollout_baseline_mse": F.mse_loss(last_seen.expand_as(future), future).item(),
    }


def save_rollouts(model, series, clean, context, horizon, path, n=4):
    """Plot ``n`` test series with the model's rollout; returns None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: matplotlib is not installed, so no rollouts.png (pip install matplotlib)")
        return None
    model.eval()
    with torch.no_grad():
        forecast = rollout(model, series[:n, :context], horizon)
    steps = range(context + horizon)
    future = range(context, context + horizon)
    fig, axes = plt.subplots(n, 1, figsize=(9, 2.2 * n), sharex=True)
    for i, ax in enumerate(axes):
        ax.plot(steps, series[i, :context + horizon].tolist(), ".", color="gray", label="noisy")
        ax.plot(steps, clean[i, :context + horizon].tolist(), "-", color="gray", alpha=0.4,
                label="clean")
        ax.plot(future, forecast[i].tolist(), "-", color="C3", label="GRU rollout")
        ax.plot(future, [series[i, context - 1].item()] * horizon, "--", color="C0",
                label="repeat last value")
        ax.axvline(context - 0.5, color="k", lw=0.5)
    axes[0].legend(loc="upper left", ncol=4, fontsize=8)
    axes[-1].set_xlabel("step")
    fig.suptitle(f"glasstorch: GRU rollouts, {horizon} steps after {context} observed")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m glasstorch.examples.sine",
                                description="Forecast noisy sine waves with a GRU.")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate")
    p.add_argument("--hidden", type=int, default=32, help="GRU hidden size")
    p.add_argument("--train-series", type=int, default=1000)
    p.add_argument("--test-series", type=int, default=500)
    p.add_argument("--length", type=int, default=60, help="steps per training series")
    p.add_argument("--context", type=int, default=40, help="observed steps before a rollout")
    p.add_argument("--horizon", type=int, default=20, help="steps predicted in a rollout")
    p.add_argument("--noise", type=float, default=0.05, help="noise standard deviation")
    p.add_argument("--out", default="sine_run", help="output directory")
    p.add_argument("--seed", type=int, default=0, help="seed for data, init and shuffling")
    p.add_argument("--no-progress", action="store_true", help="plain prints, no tqdm bar")
    return p.parse_args(argv)


def train(args):
    """Train, evaluate each epoch, save; returns a dict of results and output paths."""
    if args.context <= WARMUP or args.horizon < 1:
        raise ValueError(f"need --context > {WARMUP} and --horizon >= 1")
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    train_series, _ = make_waves(args.train_series, args.length, args.noise, args.seed)
    test_series, test_clean = make_waves(args.test_series, args.context + args.horizon,
                                         args.noise, TEST_SEED)
    loader = DataLoader(TensorDataset(train_series), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = Forecaster(args.hidden)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    print(f"sine: {args.train_series} train / {args.test_series} test series, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {args.epochs} epochs")
    history = []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        loss_sum, seen = 0.0, 0
        bar = _progress(loader, len(loader), f"epoch {epoch}/{args.epochs}",
                        not args.no_progress)
        for (batch,) in bar:
            loss = train_step(model, optimizer, batch)
            scheduler.step()
            loss_sum, seen = loss_sum + loss.item() * len(batch), seen + len(batch)
        if bar is not loader:
            bar.close()
        row = {"epoch": epoch, "train_mse": loss_sum / seen,
               **evaluate(model, test_series, args.context, args.horizon)}
        history.append(row)
        print(f"epoch {epoch:3d}  train MSE {row['train_mse']:.4f}  test MSE: one-step "
              f"{row['one_step_mse']:.4f} (naive {row['one_step_baseline_mse']:.4f}), rollout "
              f"{row['rollout_mse']:.4f} (naive {row['rollout_baseline_mse']:.4f})")
    elapsed = time.perf_counter() - start

    checkpoint = os.path.join(args.out, "sine_gru.pt")
    final = history[-1]
    torch.save({"model": model.state_dict(), "epoch": args.epochs, "metrics": final,
                "args": vars(args)}, checkpoint)
    plot = save_rollouts(model, test_series, test_clean, args.context, args.horizon,
                         os.path.join(args.out, "rollouts.png"))
    print(f"done in {elapsed:.1f} s: one-step MSE {final['one_step_mse']:.4f} vs "
          f"{final['one_step_baseline_mse']:.4f} for repeat-last-value; {args.horizon}-step "
          f"rollout MSE {final['rollout_mse']:.4f} vs {final['rollout_baseline_mse']:.4f} "
          f"(noise floor {args.noise ** 2:.4f})")
    print(f"checkpoint: {checkpoint}")
    if plot:
        print(f"rollouts: {plot}")
    return {"history": history, **final, "seconds": elapsed, "checkpoint": checkpoint,
            "plot": plot}


def main(argv=None):
    return train(parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
