"""glasstorch.nested._internal: the nested tensor class behind ``torch.nested``."""
