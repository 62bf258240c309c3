"""glasstorch.random: RNG state helpers, mirroring torch.random."""
