"""Named tuples returned by operators such as ``max(dim=...)``, mirroring torch.return_types."""
