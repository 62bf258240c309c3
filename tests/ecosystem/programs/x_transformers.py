"""x-transformers: a tiny decoder TransformerWrapper, its loss, and greedy cached generation."""

from importlib.metadata import version as _dist_version

import torch
from x_transformers import AutoregressiveWrapper, Decoder, Encoder, TransformerWrapper

from .._support import case, grads, randint, sample


def version():
    """The version of the library under test."""
    return _dist_version("x-transformers")


def _decoder():
    return TransformerWrapper(num_tokens=40, max_seq_len=24,
                              attn_layers=Decoder(dim=32, depth=2, heads=4, rotary_pos_emb=True,
                                                  ff_mult=2, attn_dim_head=8))


@case
def decoder(ctx):
    """AutoregressiveWrapper loss/backward and greedy generate with the kv cache."""
    model = ctx.weights(_decoder(), "decoder")
    wrapper = AutoregressiveWrapper(model)
    seq = randint(0, 40, 2, 12)
    logits = model(seq)
    loss = wrapper(seq)
    loss.backward()
    names = [n for n, _ in model.named_parameters()]
    out = {"logits": sample(logits), "loss": loss}
    out.update(grads(model, names[0], names[len(names) // 2], names[-1]))
    wrapper.eval()
    with torch.no_grad():
        out["generated"] = wrapper.generate(seq[:, :4], 6, temperature=0.0)
        out["generated_nocache"] = wrapper.generate(seq[:, :4], 6, temperature=0.0,
                                                    cache_kv=False)
    return out


@case
def encoder(ctx):
    """An encoder with a padding mask and embeddings returned instead of logits."""
    model = TransformerWrapper(num_tokens=40, max_seq_len=16,
                               attn_layers=Encoder(dim=32, depth=1, heads=2, ff_glu=True,
                                                   ff_mult=2))
    ctx.weights(model, "encoder")
    model.eval()
    seq = randint(1, 40, 2, 10)
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[0, 6:] = False
    with torch.no_grad():
        emb = model(seq, mask=mask, return_embeddings=True)
    return {"embeddings": sample(emb)}
