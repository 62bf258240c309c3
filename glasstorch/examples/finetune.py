"""Transfer learning: pretrain a small CNN on digits 0-4, freeze it, train a new head on 5-9.

Run with ``python -m glasstorch.examples.finetune`` (``--help`` for the flags). Written against
torch's API only: point every ``glasstorch`` import at ``torch``, here and in the digits example
it borrows helpers from, and it runs on PyTorch unchanged (the tests do just that). Takes about
five seconds on one CPU core.

The recipe: train the whole network on the first task; then freeze the backbone
(``requires_grad_(False)``, so autograd records nothing for it and no optimizer touches it),
put it in eval mode (so its BatchNorm layers use, and stop updating, their running
statistics), swap in a fresh ``nn.Linear`` head for the new classes and optimise the head's
parameters only. The backbone's weights and buffers come out bit-for-bit unchanged, which the
example checks. For contrast, the same head is also trained on a frozen *random* backbone:
the gap is what the pretrained features are worth.

Writes into ``--out`` (default ``./finetune_run``): ``backbone_0to4.pt`` (the pretrained
network, reusable with ``--backbone``) and ``finetuned_5to9.pt`` (the fine-tuned network and
its results); both load with ``torch.load``.
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

FIRST_TASK, SECOND_TASK = (0, 1, 2, 3, 4), (5, 6, 7, 8, 9)


class DigitsNet(nn.Module):
    """Backbone (two conv/BatchNorm/ReLU/max-pool stages, 8x8 -> 32 channels of 2x2) and a
    linear head on its 128 features; ``head.in_features`` is the size the backbone hands over.
    (Features from a hidden layer trained on top of these would specialise in the first task's
    classes and transfer worse.)"""

    def __init__(self, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.head = nn.Linear(32 * 2 * 2, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze_backbone_and_replace_head(model, num_classes):
    """Freeze ``model.backbone`` and give ``model`` a fresh head; returns the new head."""
    model.backbone.requires_grad_(False)
    model.head = nn.Linear(model.head.in_features, num_classes)
    return model.head


def set_train_mode(model):
    """Training mode, except a frozen backbone, which stays in eval mode: in train mode its
    BatchNorm layers would normalise with batch statistics and keep updating their buffers."""
    model.train()
    if not any(p.requires_grad for p in model.backbone.parameters()):
        model.backbone.eval()


def train_step(model, optimizer, x, y):
    """One optimizer step on a batch; returns (loss, logits)."""
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss, logits


def accuracy(model, x, y):
    """Fraction of ``x`` that ``model`` (in eval mode) labels as ``y``."""
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def task_split(x, y, classes):
    """The images of ``classes``, labelled 0..len(classes)-1."""
    keep = (y >= classes[0]) & (y <= classes[-1])
    return x[keep], y[keep] - classes[0]


def fit(model, params, data, args, name):
    """Train ``params`` of ``model`` with Adam for ``args.epochs`` epochs; prints and returns
    the per-epoch (loss, test accuracy) history."""
    x_train, y_train, x_test, y_test = data
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size,
                        shuffle=True, generator=torch.Generator().manual_seed(args.seed))
    optimizer = optim.Adam(params, lr=args.lr)
    history = []
    for epoch in range(1, args.epochs + 1):
        set_train_mode(model)
        loss_sum, seen = 0.0, 0
        bar = _progress(loader, len(loader), f"{name} {epoch}/{args.epochs}",
                        not args.no_progress)
        for xb, yb in bar:
            loss, _ = train_step(model, optimizer, xb, yb)
            loss_sum, seen = loss_sum + loss.item() * len(yb), seen + len(yb)
        if bar is not loader:
            bar.close()
        history.append({"epoch": epoch, "train_loss": loss_sum / seen,
                        "test_acc": accuracy(model, x_test, y_test)})
        print(f"{name:>10} epoch {epoch:2d}  train loss {loss_sum / seen:.4f}  "
              f"test accuracy {100 * history[-1]['test_acc']:5.1f}%")
    return history


def pretrain(args, data):
    """A DigitsNet trained on the first task, or loaded from ``args.backbone``."""
    model = DigitsNet(len(FIRST_TASK))
    if args.backbone:
        model.load_state_dict(torch.load(args.backbone)["model"])
        print(f"loaded the pretrained network from {args.backbone}")
    else:
        fit(model, model.parameters(), data, args, "pretrain")
    return model


def finetune(model, data, args, name):
    """Freeze ``model``'s backbone, train a new head on ``data``; returns the history."""
    head = freeze_backbone_and_replace_head(model, len(SECOND_TASK))
    return fit(model, head.parameters(), data, args, name)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m glasstorch.examples.finetune",
                                description="Pretrain on digits 0-4, fine-tune a new head "
                                            "on 5-9 with the backbone frozen.")
    p.add_argument("--epochs", type=int, default=15, help="epochs per training phase")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    p.add_argument("--backbone", help="a backbone_0to4.pt from an earlier run: skip pretraining")
    p.add_argument("--out", default="finetune_run", help="output directory")
    p.add_argument("--seed", type=int, default=0, help="seed for init and shuffling")
    p.add_argument("--no-progress", action="store_true", help="plain prints, no tqdm bar")
    return p.parse_args(argv)


def train(args):
    """Pretrain, fine-tune, compare with a random backbone, save; returns a dict of results."""
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    x_train, y_train, x_test, y_test = load_digits()
    first = (*task_split(x_train, y_train, FIRST_TASK), *task_split(x_test, y_test, FIRST_TASK))
    second = (*task_split(x_train, y_train, SECOND_TASK),
              *task_split(x_test, y_test, SECOND_TASK))
    start = time.perf_counter()

    model = pretrain(args, first)
    pretrain_acc = accuracy(model, first[2], first[3])
    backbone_path = os.path.join(args.out, "backbone_0to4.pt")
    torch.save({"model": model.state_dict(), "test_acc": pretrain_acc}, backbone_path)
    before = {k: v.clone() for k, v in model.backbone.state_dict().items()}

    history = finetune(model, second, args, "fine-tune")
    unchanged = all(torch.equal(before[k], v) for k, v in model.backbone.state_dict().items())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())

    torch.manual_seed(args.seed + 1)  # a random backbone, not the pretrained one's init
    random_history = finetune(DigitsNet(len(SECOND_TASK)), second, args, "random")
    elapsed = time.perf_counter() - start

    results = {"pretrain_acc": pretrain_acc, "finetune_acc": history[-1]["test_acc"],
               "random_backbone_acc": random_history[-1]["test_acc"],
               "backbone_unchanged": unchanged, "trainable_params": trainable,
               "total_params": total}
    checkpoint = os.path.join(args.out, "finetuned_5to9.pt")
    torch.save({"model": model.state_dict(), **results, "args": vars(args)}, checkpoint)
    print(f"done in {elapsed:.1f} s: digits 0-4 (pretraining) test accuracy "
          f"{100 * pretrain_acc:.1f}%; digits 5-9 with a new head on the frozen backbone "
          f"{100 * results['finetune_acc']:.1f}% (on a frozen random backbone "
          f"{100 * results['random_backbone_acc']:.1f}%)")
    print(f"trained {trainable} of {total} parameters; backbone weights and BatchNorm "
          f"statistics unchanged bit-for-bit: {unchanged}")
    print(f"checkpoints: {backbone_path}, {checkpoint}")
    return {"history": history, "random_history": random_history, **results,
            "seconds": elapsed, "backbone": backbone_path, "checkpoint": checkpoint}


def main(argv=None):
    return train(parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
