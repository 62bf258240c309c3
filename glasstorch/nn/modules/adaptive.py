"""AdaptiveLogSoftmaxWithLoss (torch.nn.modules.adaptive): the adaptive softmax of Grave et al.,
"Efficient softmax approximation for GPUs" (2016), for language models with large vocabularies.

Classes are split by ``cutoffs`` into a shortlist of frequent classes and clusters of rarer ones.
The head scores the shortlist plus one slot per cluster; each cluster has its own small tail
(a projection to ``in_features // div_value ** (i + 1)`` features, then to the cluster's classes).
A class outside the shortlist gets log p(cluster) + log p(class | cluster).
"""

from __future__ import annotations

from collections import namedtuple

from ... import cat, tensor, where
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs, n_classes):
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an "
                         "increasing order, where each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` returns ``(output, loss)``, the target
    classes' log-probabilities and their negated mean.

    Example::

        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(64, 1000, cutoffs=[20, 200])
        >>> out, loss = asm(torch.randn(8, 64), torch.randint(1000, (8,)))
        >>> out.shape
        torch.Size([8])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i, (low, high) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, high - low, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-draw the head's and every tail's weights as ``Linear`` does."""
        self.head.reset_parameters()
        for projection, classifier in self.tail:
            projection.reset_parameters()
            classifier.reset_parameters()

    def forward(self, input_, target_):
        input, target = self._batched(input_, target_)
        self._check_targets(target)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        # the head column each row reads: its class in the shortlist, else its cluster's slot
        cluster = (target.unsqueeze(1) >= tensor(self.cutoffs[:-1])).sum(1)
        head_column = where(cluster == 0, target, self.shortlist_size + cluster - 1)
        output = head_logprob.gather(1, head_column.unsqueeze(1)).squeeze(1)
        for i, low in enumerate(self.cutoffs[:-1]):
            rows = (cluster == i + 1).nonzero().flatten()
            if rows.numel() == 0:
                continue
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            in_cluster = cluster_logprob.gather(1, (target[rows] - low).unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows, in_cluster)
        loss = (-output).mean()
        if target_.dim() == 0:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _batched(self, input, target):
        """Check the shapes torch accepts (a 0-d or 1-d target); add the batch dim if missing."""
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {input.size()}")
            return input, target
        if target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {input.size()}")
            return input.unsqueeze(0), target.unsqueeze(0)
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def _check_targets(self, target):
        if target.numel() == 0:
            return  # an empty batch: torch returns an empty output and a nan loss
        low, high = target.min().item(), target.max().item()
        if low < 0 or high > self.n_classes - 1:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{low}, {high}] were found. ")

    def _full_log_prob(self, input, head_output):
        """Log-probabilities of all ``n_classes`` classes, shape (batch, n_classes)."""
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            cluster_logprob = F.log_softmax(tail(input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(pieces, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class for each row of a 2-d ``input``:
        (batch, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row of a 2-d ``input``; cheap when the head's best
        guess is in the shortlist, as the tails then need not run."""
        head_output = self.head(input)
        prediction = head_output.argmax(dim=1)
        outside = (prediction >= self.shortlist_size).nonzero().flatten()
        if outside.numel() == 0:
            return prediction
        full = self._full_log_prob(input.index_select(0, outside),
                                   head_output.index_select(0, outside))
        return prediction.index_put((outside,), full.argmax(dim=1))
