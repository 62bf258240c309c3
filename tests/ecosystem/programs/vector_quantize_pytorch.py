"""vector-quantize-pytorch: VQ with EMA codebooks, residual VQ, FSQ and LFQ."""

from importlib.metadata import version as _dist_version

from vector_quantize_pytorch import FSQ, LFQ, ResidualVQ, VectorQuantize

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("vector-quantize-pytorch")


@case
def vq(ctx):
    """VectorQuantize in training (EMA codebook update, commitment loss) then in eval."""
    vq = ctx.weights(VectorQuantize(dim=8, codebook_size=16, decay=0.8,
                                    commitment_weight=1.0), "vq")
    x = randn(0, 2, 10, 8).requires_grad_()
    quantized, indices, loss = vq(x)
    (quantized.sum() + loss).backward()
    vq.eval()
    q2, i2, _ = vq(x.detach())
    return {"quantized": quantized, "indices": indices, "loss": loss, "grad.x": x.grad,
            "embed": vq._codebook.embed, "eval_quantized": q2, "eval_indices": i2}


@case
def residual(ctx):
    """ResidualVQ with three quantizers and shared codebook dims."""
    rvq = ctx.weights(ResidualVQ(dim=8, num_quantizers=3, codebook_size=12), "rvq")
    rvq.eval()
    x = randn(1, 2, 7, 8)
    quantized, indices, losses = rvq(x)
    return {"quantized": quantized, "indices": indices, "losses": losses,
            "from_indices": rvq.get_output_from_indices(indices)}


@case
def scalar(ctx):
    """FSQ and LFQ (lookup-free) quantizers, with their straight-through gradients."""
    fsq = FSQ(levels=[8, 5, 5])
    x = randn(2, 2, 6, 3).requires_grad_()
    xhat, idx = fsq(x)
    xhat.pow(2).sum().backward()
    lfq = LFQ(codebook_size=16, dim=4, entropy_loss_weight=0.1, diversity_gamma=1.0)
    y = randn(3, 2, 4, 5)
    lq, lidx, aux = lfq(y.transpose(1, 2).reshape(2, 5, 4))
    return {"fsq": xhat, "fsq_indices": idx, "grad.x": x.grad,
            "codes": fsq.indices_to_codes(idx), "lfq": lq, "lfq_indices": lidx, "aux": aux}
