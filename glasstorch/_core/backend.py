"""The array backend. Everything above ``_core`` does tensor math through ``xp``.

Today that is NumPy; a CuPy backend serving ``device='cuda'`` plugs in here
behind the same names (the Chainer ``xp`` pattern).
"""

import numpy as xp

__all__ = ["xp"]
