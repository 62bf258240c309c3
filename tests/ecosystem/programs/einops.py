"""einops: the functions on torch tensors, and its torch layers inside a trained model."""

import einops
import torch
from einops import einsum, pack, parse_shape, rearrange, reduce, repeat, unpack
from einops.layers.torch import EinMix, Rearrange, Reduce

from .._support import case, grads, randn


def version():
    """The version of the library under test."""
    return einops.__version__


@case
def functions(ctx):
    """rearrange/reduce/repeat/einsum/pack/unpack/parse_shape and their gradients."""
    x = randn(0, 2, 3, 4, 6).requires_grad_()
    y = randn(1, 6, 5)
    out = {
        "rearrange": rearrange(x, "b c h (w two) -> b (c h) w two", two=2),
        "transpose": rearrange(x, "b c h w -> w h c b"),
        "reduce_max": reduce(x, "b c (h h2) (w w2) -> b c h w", "max", h2=2, w2=3),
        "reduce_mean": reduce(x, "b c h w -> c", "mean"),
        "reduce_sum": reduce(x, "b c h w -> b () h ()", "sum"),
        "repeat": repeat(x[0, 0], "h w -> h (w r) k", r=2, k=3),
        "einsum": einsum(x, y, "b c h w, w k -> b c h k"),
        "list_input": rearrange([x[0], x[1]], "n c h w -> c (n h) w"),
    }
    packed, ps = pack([x[0], x[1, 0], x[1, 1, 0]], "* w")
    out["packed"] = packed
    pieces = unpack(packed, ps, "* w")
    out["unpacked0"] = pieces[0]
    out["unpacked2"] = pieces[2]
    out["parse_shape"] = repr(parse_shape(x, "b c _ w"))
    loss = sum(v.float().pow(2).mean() for k, v in out.items() if not isinstance(v, str))
    loss.backward()
    out["loss"] = loss
    out["grad.x"] = x.grad
    return out


@case
def layers(ctx):
    """A model built from Rearrange, Reduce and EinMix: forward, backward, one SGD step."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=12, d=8),
        torch.nn.GELU(),
        EinMix("b t d -> b t e", weight_shape="d e", d=8, e=4),
        Reduce("b t e -> b e", "mean"),
    )
    ctx.weights(model, "layers")
    x = randn(2, 3, 3, 4, 4)
    target = randn(3, 3, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    logits = model(x)
    loss = torch.nn.functional.mse_loss(logits, target)
    loss.backward()
    out = {"logits": logits, "loss": loss, "repr": repr(model)}
    out.update(grads(model, "1.weight", "1.bias", "3.weight"))
    opt.step()
    out["after_step"] = model(x)
    return out
