"""Named tuples returned by operators such as ``max(dim=...)``, mirroring torch.return_types.

Each class is a ``tuple`` subclass with named fields (``values``, ``indices``...) that
unpacks like a tuple and prints like torch's, e.g.
``torch.return_types.max(values=tensor(...), indices=tensor(...))``.
"""

from __future__ import annotations

from collections import namedtuple

_FIELDS = {
    "max": "values indices", "min": "values indices", "sort": "values indices",
    "topk": "values indices", "kthvalue": "values indices", "median": "values indices",
    "nanmedian": "values indices", "mode": "values indices", "cummax": "values indices",
    "cummin": "values indices", "aminmax": "min max", "frexp": "mantissa exponent",
    "geqrf": "a tau", "histogram": "hist bin_edges", "histogramdd": "hist bin_edges",
    "slogdet": "sign logabsdet", "qr": "Q R", "svd": "U S V",
    "triangular_solve": "solution cloned_coefficient", "lu_unpack": "P L U",
    "linalg_cholesky_ex": "L info", "linalg_eig": "eigenvalues eigenvectors",
    "linalg_eigh": "eigenvalues eigenvectors", "linalg_inv_ex": "inverse info",
    "linalg_ldl_factor": "LD pivots", "linalg_ldl_factor_ex": "LD pivots info",
    "linalg_lstsq": "solution residuals rank singular_values", "linalg_lu": "P L U",
    "linalg_lu_factor": "LU pivots", "linalg_lu_factor_ex": "LU pivots info",
    "linalg_qr": "Q R", "linalg_slogdet": "sign logabsdet", "linalg_solve_ex": "result info",
    "linalg_svd": "U S Vh",
}

__all__ = sorted(_FIELDS)


def _repr(self):
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{body})"


def _make(name, fields):
    base = namedtuple(name, fields)
    # A subclass so the printed form and the module match torch's structseq types.
    return type(name, (base,), {"__slots__": (), "__repr__": _repr, "__str__": _repr,
                                "__module__": __name__})


for _name, _fields in _FIELDS.items():
    globals()[_name] = _make(_name, _fields)
del _name, _fields
