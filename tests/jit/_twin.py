"""Load one piece of source twice: once with ``torch`` bound to glasstorch, once to real torch,
so the same functions and modules can be scripted/traced by both (TorchScript needs the code
in a real file)."""

import importlib.util
import sys

HEADER = {"gt": "import glasstorch as torch\nimport glasstorch.nn as nn\n"
                "import glasstorch.nn.functional as F\n",
          "th": "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"}
COMMON = "from typing import Dict, List, Optional, Tuple\nimport math\n"


def load(tmp_path, name, source):
    """Modules ``(glasstorch_version, torch_version)`` of ``source``."""
    out = []
    for flavour in ("gt", "th"):
        path = tmp_path / f"{name}_{flavour}.py"
        path.write_text(HEADER[flavour] + COMMON + source)
        spec = importlib.util.spec_from_file_location(f"{name}_{flavour}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        out.append(mod)
    return out


def to_torch(t):
    """A real torch tensor with the values of a glasstorch one."""
    import torch
    return torch.from_numpy(t.detach().numpy().copy())


def copy_weights(gt_module, th_module):
    """Give the torch twin of a module the glasstorch module's parameters and buffers."""
    import torch
    sd = {k: to_torch(v) for k, v in gt_module.state_dict().items()}
    with torch.no_grad():
        th_module.load_state_dict(sd)


def close(a, b, tol=1e-5):
    """Whether glasstorch output ``a`` matches torch output ``b`` (tensors or nested)."""
    import numpy as np
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if hasattr(a, "numpy"):
        return np.allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    return a == b
