"""glasstorch.special: special functions under torch.special's names.

The functions are defined once in ``glasstorch._ops`` (``special.py`` for the special
functions, ``pointwise.py``/``activation.py``/``reduction.py`` for the ones torch.special
shares with the flat namespace) and collected here.
"""

import sys

from ._ops import activation as _act
from ._ops import pointwise as _pw
from ._ops import reduction as _red
from ._ops import special as _sp

# torch.special name -> its one definition
_NAMES = {
    "airy_ai": _sp.airy_ai, "bessel_j0": _sp.bessel_j0, "bessel_j1": _sp.bessel_j1,
    "bessel_y0": _sp.bessel_y0, "bessel_y1": _sp.bessel_y1,
    "chebyshev_polynomial_t": _sp.chebyshev_polynomial_t,
    "chebyshev_polynomial_u": _sp.chebyshev_polynomial_u,
    "chebyshev_polynomial_v": _sp.chebyshev_polynomial_v,
    "chebyshev_polynomial_w": _sp.chebyshev_polynomial_w,
    "digamma": _sp.digamma, "entr": _sp.entr, "erf": _pw.erf, "erfc": _pw.erfc,
    "erfcx": _sp.erfcx, "erfinv": _pw.erfinv, "exp2": _pw.exp2, "expit": _pw.sigmoid,
    "expm1": _pw.expm1, "gammainc": _sp.igamma, "gammaincc": _sp.igammac,
    "gammaln": _sp.lgamma, "hermite_polynomial_h": _sp.hermite_polynomial_h,
    "hermite_polynomial_he": _sp.hermite_polynomial_he, "i0": _sp.i0, "i0e": _sp.i0e,
    "i1": _sp.i1, "i1e": _sp.i1e, "laguerre_polynomial_l": _sp.laguerre_polynomial_l,
    "legendre_polynomial_p": _sp.legendre_polynomial_p, "log1p": _pw.log1p,
    "log_ndtr": _sp.log_ndtr, "logit": _pw.logit,
    "logsumexp": _red.logsumexp, "modified_bessel_i0": _sp.modified_bessel_i0,
    "modified_bessel_i1": _sp.modified_bessel_i1,
    "modified_bessel_k0": _sp.modified_bessel_k0,
    "modified_bessel_k1": _sp.modified_bessel_k1, "multigammaln": _sp.mvlgamma,
    "ndtr": _sp.ndtr, "ndtri": _sp.ndtri, "polygamma": _sp.polygamma, "psi": _sp.digamma,
    "scaled_modified_bessel_k0": _sp.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": _sp.scaled_modified_bessel_k1,
    "shifted_chebyshev_polynomial_t": _sp.shifted_chebyshev_polynomial_t,
    "shifted_chebyshev_polynomial_u": _sp.shifted_chebyshev_polynomial_u,
    "shifted_chebyshev_polynomial_v": _sp.shifted_chebyshev_polynomial_v,
    "shifted_chebyshev_polynomial_w": _sp.shifted_chebyshev_polynomial_w,
    "sinc": _sp.sinc, "softmax": _act.softmax,
    "spherical_bessel_j0": _sp.spherical_bessel_j0, "xlog1py": _sp.xlog1py,
    "xlogy": _pw.xlogy, "zeta": _sp.zeta,
}



# Two that torch.special spells with other keywords than their flat twins.
def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input))`` along ``dim``, computed stably (``dtype`` keyword-only)."""
    return _act.log_softmax(input, dim, dtype=dtype)


def round(input, *, decimals=0, out=None):
    """Round half to even after scaling by ``10 ** decimals``."""
    return _pw.round(input, decimals=decimals, out=out)


_NAMES.update(log_softmax=log_softmax, round=round)
globals().update(_NAMES)

__all__ = sorted(_NAMES)

from . import overrides as _overrides  # noqa: E402
from ._tensor import Tensor  # noqa: E402,F401  (torch.special.Tensor, as torch's)

_overrides._install_module(sys.modules[__name__])
