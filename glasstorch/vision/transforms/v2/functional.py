"""The v2 functional names that coincide with v1's (same functions)."""
from ..functional import *  # noqa: F401,F403
from ..functional import __all__  # noqa: F401
