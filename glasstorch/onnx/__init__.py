"""torch.onnx: export a model to an ONNX file.

``glasstorch.onnx.export(model, args, "model.onnx")`` runs ``model`` once on ``args`` with
every operator entry point replaced by a recording wrapper (see ``_tracer``), translates
each recorded call to ONNX nodes (``_symbolic``, ``_symbolic_nn``) and writes the model:
parameters and buffers as initializers named by their ``state_dict`` keys, inputs and
outputs named as torch names them, ``dynamic_axes`` as ``dim_param`` names.

Why wrappers installed for the export only: a check in every op would cost every op, at
every call, for a feature used once; the wrappers cost nothing once put back. Why wrap
functions rather than map leaf modules (``nn.Linear`` -> Gemm): model code is as much
functional (``F.relu(x)``, ``x.view(b, -1)``, ``a + b``) as modular, and one table of
function translations serves both; composite modules are translated through the functions
they call (``nn.MultiheadAttention`` through ``F.multi_head_attention_forward``, as one
unit whose head-splitting reshapes keep batch and sequence dynamic). Each translation sees
the call's real result, which settles dtypes and shapes.

``onnx`` is needed only when exporting (``pip install onnx``); importing this package does
not import it. ``dynamo=True`` and ``dynamo=False`` run the same exporter (see ``export``).
"""

from . import errors
from ._export import ONNXProgram, OperatorExportTypes, TrainingMode, export
from ._tracer import is_in_onnx_export
from .errors import OnnxExporterError

__all__ = ["export", "is_in_onnx_export", "errors", "ONNXProgram", "OnnxExporterError",
           "TrainingMode", "OperatorExportTypes"]
