"""glasstorch.backends: the switches torch.backends offers, for this CPU build."""

from . import cpu, cuda, cudnn, mkldnn, mps, openmp, quantized  # noqa: F401
