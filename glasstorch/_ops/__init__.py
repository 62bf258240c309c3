"""Every operator, defined once, grouped by kind (one module per kind).

Importing this package attaches the Tensor methods; each module's ``__all__``
lists the functions it contributes to the flat ``glasstorch`` namespace.
"""

import importlib
import pkgutil

MODULES = tuple(importlib.import_module(f"{__name__}.{m.name}")
                for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
