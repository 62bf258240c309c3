"""torch._dynamo.exc: the errors of the graph capturer (``Unsupported`` at a graph break under
``fullgraph=True``, ``BackendCompilerFailed``, ``InvalidBackend``, ``RecompileError``)."""

from __future__ import annotations


class TorchDynamoException(RuntimeError):
    """Base class of the capturer's errors."""


class InvalidBackend(TorchDynamoException):
    """A backend name that no ``register_backend`` call registered."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class Unsupported(TorchDynamoException):
    """Code the capturer cannot put in a graph."""


class BackendCompilerFailed(TorchDynamoException):
    """A backend raised while compiling a captured graph."""

    def __init__(self, backend_fn, inner_exception):
        self.backend_name = getattr(backend_fn, "__name__", "?")
        self.inner_exception = inner_exception
        super().__init__(f"backend={self.backend_name!r} raised:\n"
                         f"{type(inner_exception).__name__}: {inner_exception}")


class RecompileError(TorchDynamoException):
    """A recompilation while ``config.error_on_recompile`` is set."""
