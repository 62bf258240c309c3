"""sigmoid_focal_loss (RetinaNet)."""
import glasstorch
import glasstorch.nn.functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):
    """Focal loss ``-alpha_t (1 - p_t)^gamma log(p_t)`` over logits ``inputs`` (differentiable).
    ``alpha < 0`` disables the class weighting."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction"
                         " modes: 'none', 'mean', 'sum'")
    p = glasstorch.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
