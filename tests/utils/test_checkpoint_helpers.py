"""torch.utils.checkpoint's helper functions, against torch on a CPU build."""

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def test_checkpoint_helpers_match_torch():
    import torch.utils.checkpoint as tc

    import glasstorch.utils.checkpoint as gc
    for lib, c in ((torch, tc), (gt, gc)):
        assert c.get_device_states(lib.ones(2)) == ([], [])
        c.set_device_states([], [])
        assert c.DefaultDeviceType.get_device_type() == "cpu"
        t = lib.ones(2, requires_grad=True)
        d, n = c.detach_variable((t, 3))
        assert d.requires_grad and d.grad_fn is None and n == 3
        with pytest.raises(RuntimeError, match="Only tuple of tensors"):
            c.detach_variable([t])
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
            c.check_backward_validity((lib.ones(1), 2))
        assert len(c.noop_context_fn()) == 2
