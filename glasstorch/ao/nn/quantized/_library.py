"""The ``quantized::`` operators (``torch.ops.quantized.add`` ...), with torch's schemas, on
the kernels of ``_kernels``: what FX graph-mode ``convert_fx`` puts in the graphs it builds,
and what code calling ``torch.ops.quantized`` directly reaches. Loaded on first access to
``torch.ops.quantized``."""

from __future__ import annotations

from glasstorch import library

from . import _kernels

_lib = library.Library("quantized", "DEF")


def _def(schema, fn):
    _lib.define(schema)
    _lib.impl(schema.split("(", 1)[0], fn, "CPU")


for _name, _relu in (("add", False), ("add_relu", True)):
    _def(f"{_name}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
         lambda qa, qb, scale, zero_point, _relu=_relu:
         _kernels.add(qa, qb, scale, zero_point, relu=_relu))
for _name, _relu in (("mul", False), ("mul_relu", True)):
    _def(f"{_name}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
         lambda qa, qb, scale, zero_point, _relu=_relu:
         _kernels.mul(qa, qb, scale, zero_point, relu=_relu))
_def("matmul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
     _kernels.matmul)
_def("add_scalar(Tensor qa, Scalar b) -> Tensor qc", _kernels.add_scalar)
_def("mul_scalar(Tensor qa, Scalar b) -> Tensor qc", _kernels.mul_scalar)


def _cat(qx, dim, scale, zero_point):
    # without qparams the result keeps the first input's, as torch's
    if scale is None:
        scale, zero_point = qx[0].q_scale(), qx[0].q_zero_point()
    return _kernels.cat(qx, dim, scale, zero_point)


_def("cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor", _cat)
