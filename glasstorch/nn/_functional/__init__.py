"""torch.nn.functional, by family; see glasstorch/nn/functional.py."""
