"""torch._dynamo.backends: the compiler backends ``torch.compile(backend=...)`` can name."""
