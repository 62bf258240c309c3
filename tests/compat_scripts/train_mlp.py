"""A plain PyTorch training script: MLP regression + a small classifier, DataLoader, save/load.

Weights are initialised deterministically (no RNG), so any PyTorch implementation prints the
same losses.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--save", default=None)
args = parser.parse_args()


def init_(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.linspace(-0.5, 0.5, n).reshape(p.shape) * (1.0 + 0.1 * i))
            p.add_(0.05 * torch.cos(torch.arange(n, dtype=torch.float32)).reshape(p.shape))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


xs = torch.linspace(-1, 1, 64).reshape(32, 2)
ys = torch.sin(3 * xs[:, :1]) + 0.5 * xs[:, 1:]
model = MLP()
init_(model)
opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
loss_fn = nn.MSELoss()
for step in range(args.steps + 1):
    opt.zero_grad()
    loss = loss_fn(model(xs), ys)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"regression step {step} loss {loss.item():.6g}")

# classifier: 3 classes on a grid, mini-batches in a fixed order
pts = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 8), torch.linspace(-1, 1, 8),
                                 indexing="ij"), -1).reshape(-1, 2)
labels = (pts[:, 0] > 0).long() + (pts[:, 1] > 0.3).long()
loader = DataLoader(TensorDataset(pts, labels), batch_size=16, shuffle=False)
clf = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
init_(clf)
adam = torch.optim.Adam(clf.parameters(), lr=0.05)
for epoch in range(15):
    total = 0.0
    for xb, yb in loader:
        adam.zero_grad()
        loss = F.cross_entropy(clf(xb), yb)
        loss.backward()
        adam.step()
        total += loss.item() * len(yb)
    if epoch % 5 == 4:
        acc = (clf(pts).argmax(1) == labels).float().mean().item()
        print(f"classifier epoch {epoch} loss {total / len(labels):.6g} acc {acc:.4f}")

if args.save:
    torch.save(clf.state_dict(), args.save)
    clone = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
    clone.load_state_dict(torch.load(args.save))
    print("reloaded equal", torch.equal(clone(pts), clf(pts)))
