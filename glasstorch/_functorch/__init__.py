"""The machinery behind ``glasstorch.func``: function transforms built on the autograd graph."""
