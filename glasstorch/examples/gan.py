"""A generative adversarial network (Goodfellow et al., 2014) on the bundled 8x8 digits.

Run with ``python -m glasstorch.examples.gan`` (``--help`` for the flags). Written against
torch's API only: point every ``glasstorch`` import at ``torch`` (``glasstorch.vision`` at
``torchvision``), here and in the digits example it borrows helpers from, and it runs on PyTorch
unchanged (the tests do just that). Takes about half a minute on one CPU core.

Two MLPs play against each other: the discriminator learns to tell real digits from generated
ones (binary cross-entropy on logits), the generator learns to make the discriminator call its
images real (the non-saturating loss). Each step updates the discriminator once, then the
generator once. Progress is measured by the Frechet distance between the pixel statistics
(mean and covariance of the 64 pixels) of generated and held-out test images: lower is better,
and the distance between the training and test images is the level to aim for.

Writes into ``--out`` (default ``./gan_run``): ``gan.pt`` (checkpoint, load with
``torch.load``) and ``gan_samples.png`` (a grid of generated digits; needs Pillow).
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

EVAL_SAMPLES = 1000


class Generator(nn.Module):
    """A ``noise_dim`` standard normal vector -> an 8x8 image with values in [-1, 1]."""

    def __init__(self, noise_dim=32, hidden=256):
        super().__init__()
        self.noise_dim = noise_dim
        self.net = nn.Sequential(
            nn.Linear(noise_dim, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, 64), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z).view(-1, 1, 8, 8)


class Discriminator(nn.Module):
    """An 8x8 image -> one logit, positive for "real"."""

    def __init__(self, hidden=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(64, hidden), nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def train_step(generator, discriminator, opt_g, opt_d, real, z):
    """One discriminator step then one generator step on the same fakes ``generator(z)``;
    returns (discriminator loss, generator loss) as tensors."""
    criterion = nn.BCEWithLogitsLoss()
    is_real = torch.ones(real.shape[0], 1)
    is_fake = torch.zeros(z.shape[0], 1)
    fake = generator(z)
    # detach: the discriminator's loss must not push gradients into the generator
    d_loss = (criterion(discriminator(real), is_real)
              + criterion(discriminator(fake.detach()), is_fake))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    # non-saturating loss: maximise log D(G(z)) rather than minimise log(1 - D(G(z)))
    g_loss = criterion(discriminator(fake), torch.ones(z.shape[0], 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    return d_loss, g_loss


def pixel_frechet_distance(a, b):
    """Frechet distance between Gaussians fitted to two sets of images' pixels:
    |mu_a - mu_b|^2 + tr(S_a + S_b - 2 (S_a S_b)^(1/2)); computed in float64."""
    a, b = a.flatten(1).double(), b.flatten(1).double()
    mean_a, mean_b = a.mean(0), b.mean(0)
    cov_a, cov_b = _covariance(a, mean_a), _covariance(b, mean_b)
    # the eigenvalues of a product of two covariances are real and >= 0 (up to rounding)
    eigenvalues = torch.linalg.eigvals(cov_a @ cov_b).real.clamp(min=0)
    trace = torch.trace(cov_a) + torch.trace(cov_b) - 2 * eigenvalues.sqrt().sum()
    return ((mean_a - mean_b).pow(2).sum() + trace).item()


def _covariance(x, mean):
    centred = x - mean
    return centred.T @ centred / (x.shape[0] - 1)


def sample(generator, n, seed=None):
    """``n`` generated images scaled to [0, 1] (a fixed set when ``seed`` is given)."""
    noise_generator = None if seed is None else torch.Generator().manual_seed(seed)
    generator.eval()
    with torch.no_grad():
        z = torch.randn((n, generator.noise_dim), generator=noise_generator)
        return (generator(z) + 1) / 2


def save_samples(images, path):
    """A PNG grid of the images, each shown 4x enlarged; returns None without Pillow."""
    try:
        from glasstorch.vision.utils import save_image
        save_image(F.interpolate(images, scale_factor=4), path, nrow=8, pad_value=0.5)
    except ImportError as error:  # Pillow (or, on PyTorch, torchvision) is missing
        print(f"note: no image grid: {error}")
        return None
    return path


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m glasstorch.examples.gan",
                                description="Train a small GAN on 8x8 digits.")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (both nets)")
    p.add_argument("--noise-dim", type=int, default=32, help="size of the generator's input")
    p.add_argument("--hidden", type=int, default=256, help="width of the hidden layers")
    p.add_argument("--log-every", type=int, default=10, help="print every this many epochs")
    p.add_argument("--out", default="gan_run", help="output directory")
    p.add_argument("--seed", type=int, default=0, help="seed for init, shuffling and noise")
    p.add_argument("--no-progress", action="store_true", help="plain prints, no tqdm bar")
    return p.parse_args(argv)


def train(args):
    """Train, measure, save; returns a dict of results and output paths."""
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    x_train, _, x_test, _ = load_digits()
    x_train = x_train * 2 - 1  # the generator's tanh output range
    loader = DataLoader(TensorDataset(x_train), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    generator = Generator(args.noise_dim, args.hidden)
    discriminator = Discriminator(args.hidden)
    # beta1 = 0.5: the usual GAN choice, less momentum in a game whose target keeps moving
    opt_g = optim.Adam(generator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    floor = pixel_frechet_distance((x_train + 1) / 2, x_test)
    initial = pixel_frechet_distance(sample(generator, EVAL_SAMPLES, args.seed), x_test)
    print(f"gan: {len(x_train)} train images, {args.epochs} epochs, batch {args.batch_size}; "
          f"pixel FD to test images: untrained {initial:.2f}, train images {floor:.2f}")
    history = []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        generator.train()
        discriminator.train()
        d_sum, g_sum, steps = 0.0, 0.0, 0
        bar = _progress(loader, len(loader), f"epoch {epoch}/{args.epochs}",
                        not args.no_progress)
        for (real,) in bar:
            z = torch.randn(real.shape[0], args.noise_dim)
            d_loss, g_loss = train_step(generator, discriminator, opt_g, opt_d, real, z)
            d_sum, g_sum, steps = d_sum + d_loss.item(), g_sum + g_loss.item(), steps + 1
        if bar is not loader:
            bar.close()
        row = {"epoch": epoch, "d_loss": d_sum / steps, "g_loss": g_sum / steps}
        if epoch % args.log_every == 0 or epoch == args.epochs:
            generated = sample(generator, EVAL_SAMPLES, args.seed)
            row["pixel_fd"] = pixel_frechet_distance(generated, x_test)
            print(f"epoch {epoch:4d}  D loss {row['d_loss']:.3f}  G loss {row['g_loss']:.3f}  "
                  f"pixel FD {row['pixel_fd']:.2f}")
        history.append(row)
    elapsed = time.perf_counter() - start

    checkpoint = os.path.join(args.out, "gan.pt")
    torch.save({"generator": generator.state_dict(), "discriminator": discriminator.state_dict(),
                "epoch": args.epochs, "pixel_fd": history[-1]["pixel_fd"],
                "args": vars(args)}, checkpoint)
    grid = save_samples(sample(generator, 64, args.seed), os.path.join(args.out,
                                                                       "gan_samples.png"))
    final = history[-1]["pixel_fd"]
    print(f"done in {elapsed:.1f} s: pixel FD {final:.2f} (untrained {initial:.2f}, "
          f"train images {floor:.2f})")
    print(f"checkpoint: {checkpoint}")
    if grid:
        print(f"samples: {grid}")
    return {"history": history, "initial_pixel_fd": initial, "pixel_fd": final,
            "floor_pixel_fd": floor, "seconds": elapsed, "checkpoint": checkpoint,
            "samples": grid}


def main(argv=None):
    return train(parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
