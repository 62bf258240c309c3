"""Probes and switches answer truthfully for this CPU build, with torch's names."""

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def test_accelerator_and_backends():
    assert gt.accelerator.is_available() is False
    assert gt.accelerator.current_accelerator() is None and gt.accelerator.device_count() == 0
    assert gt.backends.mps.is_available() is False and gt.backends.mps.is_built() is False
    for name in ("deterministic", "benchmark", "enabled", "allow_tf32"):
        assert hasattr(gt.backends.cudnn, name)
    gt.backends.cudnn.benchmark = True
    gt.backends.cuda.matmul.allow_tf32 = True
    assert gt.compiler.is_compiling() is False and gt.jit.is_scripting() is False


def test_threads_determinism_precision():
    before = gt.get_num_threads()
    gt.set_num_threads(1)
    assert gt.get_num_threads() == 1
    gt.set_num_threads(before)
    with pytest.raises(RuntimeError):
        gt.set_num_threads(0)
    gt.use_deterministic_algorithms(True)
    assert gt.are_deterministic_algorithms_enabled()
    gt.use_deterministic_algorithms(False)
    gt.set_float32_matmul_precision("high")
    assert gt.get_float32_matmul_precision() == "high"
    gt.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        gt.set_float32_matmul_precision("fast")


def test_version_says_what_it_is():
    assert gt.__version__ == "2.13.0+cpu" and gt.version.cuda is None
    assert gt.version.torch_spec == "2.13.0"
