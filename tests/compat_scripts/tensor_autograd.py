"""A plain PyTorch script: tensor math, views, broadcasting, reductions and autograd."""

import math

import torch

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("shape", tuple(x.shape), "stride", x.stride(), "dtype", x.dtype)
col = x.t()[1]
col.mul_(10)
print("x after view write", x.tolist())
print("is_contiguous", x.t().is_contiguous(), "storage_offset", col.storage_offset())
y = x + torch.tensor([1.0, 2.0, 3.0, 4.0])
print("broadcast sum", y.sum().item(), "mean dim0", y.mean(0).tolist())
print("int/int", (torch.tensor([3, 4]) / 2).tolist(), (torch.tensor([3]) / 2).dtype)
print("max", x.max(dim=1).values.tolist(), x.argmax().item())
print("matmul", (x @ x.t()).diagonal().tolist())
print("softmax", [round(v, 6) for v in torch.softmax(torch.tensor([1.0, 2.0, 3.0]), 0).tolist()])

w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
inp = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
out = torch.tanh(inp @ w + b).pow(2).sum()
out.backward()
print("loss", round(out.item(), 6))
print("w.grad", [[round(v, 6) for v in row] for row in w.grad.tolist()])
print("b.grad", [round(v, 6) for v in b.grad.tolist()])
with torch.no_grad():
    z = w * 2
print("no_grad requires_grad", z.requires_grad, "leaf", w.is_leaf, "pi", round(math.pi, 3))
