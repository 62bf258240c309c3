"""``glasstorch.utils.tensorboard``: TensorBoard logging (torch.utils.tensorboard).

``SummaryWriter`` writes real TensorBoard event files through the optional ``tensorboardX``
package (``pip install tensorboardX``); it is imported only when a writer is created.
"""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
