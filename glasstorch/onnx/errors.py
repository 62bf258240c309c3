"""The ONNX exporter's exceptions and warning (torch.onnx.errors)."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "SymbolicValueError",
           "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings in the ONNX exporter (for example a tensor read as a Python value while
    tracing, which the exported graph then holds as a constant)."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter; the base class of the others."""


class UnsupportedOperatorError(OnnxExporterError):
    """The model called an operator the exporter cannot translate to ONNX.

    ``name`` is the operator as torch names it (``'aten::cumprod'``), ``version`` the
    opset exported to, ``supported_version`` the first opset that supports it, if any.
    """

    def __init__(self, name: str, version: int, supported_version: int | None) -> None:
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        else:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   "supported")
        super().__init__(msg)
        self.name = name


class SymbolicValueError(OnnxExporterError):
    """An operator's arguments cannot be expressed in the exported graph (for example a
    slice bound that is itself a traced tensor)."""

    def __init__(self, msg: str, value) -> None:
        super().__init__(f"{msg}  [Caused by the value {value!r}]")
