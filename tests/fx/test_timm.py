"""timm imports and runs under ``glasstorch.install_as_torch()``: it calls ``torch.fx.wrap`` at
import and builds its fx feature extractors on torchvision's feature_extraction."""

import importlib.util
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import glasstorch
    glasstorch.install_as_torch()
    import torch, timm
    m = timm.create_model("resnet18", pretrained=False).eval()
    x = torch.randn(1, 3, 32, 32)
    y = m(x)
    assert tuple(y.shape) == (1, 1000), y.shape
    gm = torch.fx.symbolic_trace(m)
    assert torch.allclose(gm(x), y, atol=1e-5)
    feats = timm.create_model("resnet18", pretrained=False, features_only=True,
                              feature_cls="fx").eval()
    shapes = [tuple(f.shape) for f in feats(x)]
    assert shapes == [(1, 64, 16, 16), (1, 64, 8, 8), (1, 128, 4, 4), (1, 256, 2, 2),
                      (1, 512, 1, 1)], shapes
    print("ok")
""")


def test_timm_resnet18_under_glasstorch():
    # importing timm here would import real torch (and torchvision): only check it is there
    if importlib.util.find_spec("timm") is None:
        pytest.skip("timm is not installed")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")
