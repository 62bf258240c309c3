"""glasstorch.version: the torch release glasstorch serves, and glasstorch's own version.

``__version__`` is what ``torch.version.__version__`` is on torch 2.13's CPU-only build,
``"2.13.0+cpu"`` (a plain ``str``, as torch's; ``glasstorch.__version__`` is the same text as
a ``TorchVersion``). Libraries check torch's version before they run (transformers refuses
torch < 2.6), so glasstorch reports the release whose behaviour it implements; the ``+cpu``
label says what the build offers, as torch's CPU wheels do.

glasstorch's own release is ``glasstorch_version`` (``importlib.metadata.version("glasstorch")``
gives the same); ``torchvision_version`` is what ``torchvision.__version__`` reports when
``glasstorch.vision`` serves torchvision: 0.28 is the torchvision release paired with torch 2.13.
"""

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0+cpu"
torch_spec = "2.13.0"  # the torch release whose behaviour is the specification
torchvision_version = "0.28.0+cpu"
glasstorch_version = "0.1.0"
debug = False
cuda = None
hip = None
rocm = None
xpu = None
git_version = "unknown"
