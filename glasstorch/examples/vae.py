"""A variational autoencoder (Kingma & Welling, 2013) on the bundled 8x8 handwritten digits.

Run with ``python -m glasstorch.examples.vae`` (``--help`` for the flags). Written against
torch's API only: point every ``glasstorch`` import at ``torch`` (``glasstorch.vision`` at
``torchvision``), here and in the digits example it borrows helpers from, and it runs on PyTorch
unchanged (the tests do just that). Takes about ten seconds on one CPU core.

An MLP encoder gives the mean and log-variance of a Gaussian over a small latent code; a code
is sampled with the reparameterisation ``z = mu + eps * std`` (so gradients flow through the
sample) and an MLP decoder turns it back into per-pixel logits. The loss is the negative
evidence lower bound (ELBO): pixel-wise binary cross-entropy (intensities in [0, 1] read as
Bernoulli probabilities) plus the KL divergence from the prior N(0, I), in nats per image.

Writes into ``--out`` (default ``./vae_run``): ``vae.pt`` (checkpoint, load with
``torch.load``) and ``vae_grid.png`` (test images, their reconstructions and samples from the
prior; needs Pillow).
"""

import argparse
import os
import sys
import time

import glasstorch as torch
import glasstorch.nn as nn
import glasstorch.nn.functional as F
import glasstorch.optim as optim
from glasstorch.examples.digits import _progress, load_digits
from glasstorch.utils.data import DataLoader, TensorDataset

EVAL_NOISE_SEED = 1234  # the same eps for every evaluation, so test ELBOs compare across epochs


class VAE(nn.Module):
    """64 pixels -> hidden -> (mu, log-variance) of a ``latent``-dim code -> hidden -> 64 logits."""

    def __init__(self, latent=8, hidden=256):
        super().__init__()
        self.latent = latent
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU())
        self.to_mu = nn.Linear(hidden, latent)
        self.to_logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, 64))

    def encode(self, x):
        """(mu, logvar) of the Gaussian over codes for images ``x`` (N, 1, 8, 8)."""
        h = self.encoder(x)
        return self.to_mu(h), self.to_logvar(h)

    def decode(self, z):
        """Pixel logits, shaped as images (N, 1, 8, 8); ``sigmoid`` gives intensities."""
        return self.decoder(z).view(-1, 1, 8, 8)

    def forward(self, x, eps=None):
        """(pixel logits, mu, logvar); ``eps`` is the standard normal noise (drawn if None)."""
        mu, logvar = self.encode(x)
        std = torch.exp(0.5 * logvar)
        if eps is None:
            eps = torch.randn_like(std)
        return self.decode(mu + eps * std), mu, logvar


def negative_elbo(logits, x, mu, logvar):
    """(-ELBO, reconstruction term, KL term), each in nats per image (batch mean)."""
    recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    # KL(N(mu, std^2) || N(0, 1)) in closed form, summed over latent dims
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    n = x.shape[0]
    return (recon + kl) / n, recon / n, kl / n


def train_step(model, optimizer, x, eps=None):
    """One Adam step on a batch; returns the batch's (-ELBO, recon, KL) as tensors."""
    logits, mu, logvar = model(x, eps)
    loss, recon, kl = negative_elbo(logits, x, mu, logvar)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss, recon, kl


def evaluate(model, x):
    """Mean (ELBO, recon, KL) over ``x`` in nats per image, with fixed evaluation noise."""
    model.eval()
    generator = torch.Generator().manual_seed(EVAL_NOISE_SEED)
    with torch.no_grad():
        eps = torch.randn((x.shape[0], model.latent), generator=generator)
        logits, mu, logvar = model(x, eps)
        loss, recon, kl = negative_elbo(logits, x, mu, logvar)
    return -loss.item(), recon.item(), kl.item()


def save_grid(model, x_test, path, n=8):
    """PNG grid: a row of test images, their reconstructions (from mu) below, then samples
    from the prior; each 8x8 image is shown 4x enlarged. Returns None without Pillow."""
    model.eval()
    with torch.no_grad():
        originals = x_test[:n]
        reconstructions = torch.sigmoid(model.decode(model.encode(originals)[0]))
        samples = torch.sigmoid(model.decode(torch.randn(2 * n, model.latent)))
    images = F.interpolate(torch.cat([originals, reconstructions, samples]), scale_factor=4)
    try:
        from glasstorch.vision.utils import save_image
        save_image(images, path, nrow=n, pad_value=0.5)
    except ImportError as error:  # Pillow (or, on PyTorch, torchvision) is missing
        print(f"note: no image grid: {error}")
        return None
    return path


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m glasstorch.examples.vae",
                                description="Train a variational autoencoder on 8x8 digits.")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--latent", type=int, default=8, help="size of the latent code")
    p.add_argument("--hidden", type=int, default=256, help="width of the hidden layers")
    p.add_argument("--log-every", type=int, default=10, help="print every this many epochs")
    p.add_argument("--out", default="vae_run", help="output directory")
    p.add_argument("--seed", type=int, default=0, help="seed for init, shuffling and noise")
    p.add_argument("--no-progress", action="store_true", help="plain prints, no tqdm bar")
    return p.parse_args(argv)


def train(args):
    """Train, evaluate, save; returns a dict of results and output paths."""
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    x_train, _, x_test, _ = load_digits()
    generator = torch.Generator().manual_seed(args.seed)
    loader = DataLoader(TensorDataset(x_train), batch_size=args.batch_size, shuffle=True,
                        generator=generator)
    model = VAE(args.latent, args.hidden)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    print(f"vae: {len(x_train)} train / {len(x_test)} test images, latent {args.latent}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {args.epochs} epochs")
    initial_elbo = evaluate(model, x_test)[0]
    print(f"test ELBO before training {initial_elbo:.2f} nats/image")
    history = []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        seen, loss_sum = 0, 0.0
        bar = _progress(loader, len(loader), f"epoch {epoch}/{args.epochs}",
                        not args.no_progress)
        for (xb,) in bar:
            loss, _, _ = train_step(model, optimizer, xb)
            seen += len(xb)
            loss_sum += loss.item() * len(xb)
        if bar is not loader:
            bar.close()
        test_elbo, test_recon, test_kl = evaluate(model, x_test)
        history.append({"epoch": epoch, "train_elbo": -loss_sum / seen, "test_elbo": test_elbo,
                        "test_recon": test_recon, "test_kl": test_kl})
        if epoch % args.log_every == 0 or epoch == args.epochs:
            print(f"epoch {epoch:4d}  train ELBO {-loss_sum / seen:8.2f}  test ELBO "
                  f"{test_elbo:8.2f} (recon {test_recon:.2f}, KL {test_kl:.2f}) nats/image")
    elapsed = time.perf_counter() - start

    checkpoint = os.path.join(args.out, "vae.pt")
    torch.save({"model": model.state_dict(), "epoch": args.epochs,
                "test_elbo": history[-1]["test_elbo"], "args": vars(args)}, checkpoint)
    grid = save_grid(model, x_test, os.path.join(args.out, "vae_grid.png"))
    print(f"done in {elapsed:.1f} s: test ELBO {history[-1]['test_elbo']:.2f} nats/image "
          f"(from {initial_elbo:.2f})")
    print(f"checkpoint: {checkpoint}")
    if grid:
        print(f"image grid (test images / reconstructions / samples): {grid}")
    return {"history": history, "initial_test_elbo": initial_elbo,
            "test_elbo": history[-1]["test_elbo"], "seconds": elapsed,
            "checkpoint": checkpoint, "grid": grid}


def main(argv=None):
    return train(parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
