"""``torch.utils.dlpack``: exchange tensors with other libraries through DLPack capsules.

``from_dlpack`` and ``to_dlpack`` are glasstorch's (``glasstorch/_dlpack.py``); this module is
where torch code imports them from."""

from __future__ import annotations

import enum

from .._dlpack import from_dlpack, to_dlpack  # noqa: F401

__all__ = ["DLDeviceType", "from_dlpack"]  # as torch's (to_dlpack is importable too)


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (``__dlpack_device__()[0]``); glasstorch tensors are
    ``kDLCPU``."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
