"""Every operator, defined once, grouped by kind. Importing this package attaches the
Tensor methods; ``__all__`` of each module lists its public ``glasstorch.<name>`` functions."""

from . import copying, creation, pointwise, views  # noqa: F401

MODULES = (copying, creation, pointwise, views)
