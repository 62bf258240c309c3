"""A short tour of glasstorch: tensors, views that share storage, promotion, printing.

Run with ``python -m glasstorch.examples.demo``.
"""

import glasstorch as torch


def main():
    torch.manual_seed(0)
    x = torch.arange(12, dtype=torch.float32).view(3, 4)
    print("x =", x, sep="\n")
    col = x.t()[1]                         # a view: no copy
    col.mul_(10)                           # writes through to x
    print("after x.t()[1].mul_(10):", x, sep="\n")
    print("shares storage:", col.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
          "| stride", col.stride(), "| offset", col.storage_offset(), "| version", x._version)
    print("int64 / 2 ->", (torch.tensor([1, 2]) / 2).dtype, "| int64 + float32 ->",
          (torch.tensor([1]) + torch.ones(1)).dtype)
    w = torch.randn(4, 2)
    y = x @ w
    print("x @ w ->", y.shape, y.dtype)
    values, indices = y.max(dim=1)
    print("row max:", values, "at", indices)
    print("sorted column 0:", y[:, 0].sort().values)


if __name__ == "__main__":
    main()
