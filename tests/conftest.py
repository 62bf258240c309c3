import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest

try:  # small test tensors: torch's thread pool only adds overhead on this 2-core machine
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None


@pytest.fixture(autouse=True)
def _restore_torch_validate_args():
    """Real torch.compile switches torch.distributions' argument validation off for the whole
    process; give every test torch's default back."""
    yield
    if torch is not None:
        torch.distributions.Distribution.set_default_validate_args(True)
