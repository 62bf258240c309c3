"""glasstorch.linalg: linear algebra, mirroring torch.linalg."""
