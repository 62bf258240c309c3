"""The int8 tests that compare bit for bit with torch's kernels were checked on an AVX512
machine. On other CPUs torch's fbgemm/qnnpack/oneDNN kernels and its histogram observer
take other code paths that round differently (measured on an AVX2 AMD EPYC: observer scales
one float32 ulp apart, requantized values a unit apart); glasstorch emulates the AVX512
paths only so far (issue 22). There these tests are expected to fail, not skipped."""

import pytest

# the tests that differ from torch on a non-AVX512 CPU (measured), by node id
_AVX512_PATHS = {
    "test_fx_mode.py::test_prepare_convert_matches_torch[qnnpack]",
    "test_modules.py::test_conv_nd_bit_exact[True-3-kwargs2]",
    "test_workflow.py::test_static_workflow_matches_torch[x86]",
    "test_workflow.py::test_static_workflow_matches_torch[qnnpack]",
    "test_workflow.py::test_int8_kernels_bit_for_bit[x86]",
    "test_workflow.py::test_int8_kernels_bit_for_bit[fbgemm]",
    "test_workflow.py::test_qat_workflow_matches_torch[qnnpack-0]",
    "test_workflow.py::test_float_functional_add_cat_match_torch",
}


def _torch_capability():
    import torch
    return torch.backends.cpu.get_cpu_capability()


def pytest_collection_modifyitems(config, items):
    capability = None
    for item in items:
        if item.nodeid.split("tests/quantization/", 1)[-1] not in _AVX512_PATHS:
            continue
        if capability is None:
            capability = _torch_capability()
        if not capability.startswith("AVX512"):
            item.add_marker(pytest.mark.xfail(
                reason=f"torch's int8 kernels on this {capability} CPU round differently from "
                       f"the AVX512 paths glasstorch emulates (issue 22)", strict=False))
