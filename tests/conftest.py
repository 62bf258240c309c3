import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:  # small test tensors: torch's thread pool only adds overhead on this 2-core machine
    import torch

    torch.set_num_threads(1)
except ImportError:
    pass
