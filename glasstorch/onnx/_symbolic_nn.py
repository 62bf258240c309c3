"""ONNX translations of the neural-network operators: linear and convolution layers,
normalization, pooling, activations, dropout, embedding, padding, attention.

Same contract as ``_symbolic``: ``fn(g, result, *args, **kwargs)`` returns the value name(s)
computing ``result``. Keys prefixed ``F.`` are ``torch.nn.functional`` functions whose
signature differs from the flat function of the same name (``F.batch_norm``).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dt
from ._symbolic import symbolic, wrap_dim


def _ntuple(value, n):
    return list(value) if isinstance(value, (tuple, list)) else [value] * n


def _param_or(g, t, fill, size, dtype):
    """``t``'s value, or a constant vector of ``fill`` where torch allows None (no affine)."""
    if t is not None:
        return g.operand(t, dtype)
    return g.constant(np.full(size, fill, dtype=dtype.np))


# ---------------------------------------------------------------------------- linear
@symbolic("linear")
def linear(g, result, input, weight, bias=None, **_):
    dt = result.dtype
    x, w = g.operand(input, dt), g.operand(weight, dt)
    b = None if bias is None else g.operand(bias, dt)
    if input.dim() == 2:
        return g.op("Gemm", x, w, b, transB=1)
    out = g.op("MatMul", x, g.transpose(w, [1, 0]) if weight.dim() == 2 else w)
    return out if b is None else g.op("Add", out, b)


@symbolic("bilinear")
def bilinear(g, result, input1, input2, weight, bias=None, **_):
    dt = result.dtype
    out = g.op("Einsum", g.operand(input1, dt), g.operand(weight, dt), g.operand(input2, dt),
               equation="...i,oij,...j->...o")
    return out if bias is None else g.op("Add", out, g.operand(bias, dt))


# ---------------------------------------------------------------------------- convolution
def _conv_padding(padding, kernel, dilation, n):
    """ONNX ``pads`` (all begins, then all ends) for torch's ``padding``."""
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    pads = _ntuple(padding, n)
    return pads + pads


@symbolic("conv1d", "conv2d", "conv3d")
def conv(g, result, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, **_):
    n = weight.dim() - 2
    dilation = _ntuple(dilation, n)
    return _convolution(g, result, input, weight, bias, "Conv", strides=_ntuple(stride, n),
                        pads=_conv_padding(padding, weight.shape[2:], dilation, n),
                        dilations=dilation, group=groups)


@symbolic("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def conv_transpose(g, result, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                   groups=1, dilation=1, **_):
    n = weight.dim() - 2
    return _convolution(g, result, input, weight, bias, "ConvTranspose",
                        strides=_ntuple(stride, n), pads=_conv_padding(padding, None, None, n),
                        output_padding=_ntuple(output_padding, n),
                        dilations=_ntuple(dilation, n), group=groups)


def _convolution(g, result, input, weight, bias, op_type, **attrs):
    dt = result.dtype
    b = None if bias is None else g.operand(bias, dt)
    return _batched(g, input, g.operand(input, dt), weight.dim() - 2, lambda x: g.op(
        op_type, x, g.operand(weight, dt), b, kernel_shape=list(weight.shape[2:]), **attrs))


# ---------------------------------------------------------------------------- normalization
@symbolic("F.batch_norm")
def batch_norm(g, result, input, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-5, **_):
    if training or running_mean is None:
        raise g.unsupported("aten::batch_norm (training mode: batch statistics)")
    dt, c = result.dtype, input.shape[1]
    return g.op("BatchNormalization", g.operand(input, dt), _param_or(g, weight, 1, c, dt),
                _param_or(g, bias, 0, c, dt), g.operand(running_mean, dt),
                g.operand(running_var, dt), epsilon=float(eps))


@symbolic("F.layer_norm")
def layer_norm(g, result, input, normalized_shape, weight=None, bias=None, eps=1e-5, **_):
    dt = result.dtype
    n = len(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else 1
    shape = list(input.shape[-n:])
    x = g.operand(input, dt)
    w = _param_or(g, weight, 1, shape, dt)
    b = _param_or(g, bias, 0, shape, dt)
    if g.opset >= 17:
        return g.op("LayerNormalization", x, w, b, axis=-n, epsilon=float(eps))
    return g.op("Add", g.op("Mul", _normalized(g, x, range(-n, 0), eps, dt), w), b)


def _normalized(g, x, axes, eps, dt):
    """(x - mean) / sqrt(var + eps) over ``axes``."""
    axes = list(axes)
    centred = g.op("Sub", x, g.reduce("ReduceMean", x, axes, True))
    var = g.reduce("ReduceMean", g.op("Mul", centred, centred), axes, True)
    return g.op("Div", centred, g.op("Sqrt", g.op("Add", var, g.scalar(eps, dt))))


@symbolic("F.rms_norm", "rms_norm")
def rms_norm(g, result, input, normalized_shape, weight=None, eps=None, **_):
    dt = result.dtype
    n = len(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else 1
    eps = float(np.finfo(dt.np).eps) if eps is None else eps
    x = g.operand(input, dt)
    ms = g.reduce("ReduceMean", g.op("Mul", x, x), list(range(-n, 0)), True)
    out = g.op("Div", x, g.op("Sqrt", g.op("Add", ms, g.scalar(eps, dt))))
    return out if weight is None else g.op("Mul", out, g.operand(weight, dt))


@symbolic("F.group_norm")
def group_norm(g, result, input, num_groups, weight=None, bias=None, eps=1e-5, **_):
    dt = result.dtype
    x = g.operand(input, dt)
    grouped = g.op("Reshape", x, g.ints([0, num_groups, -1]))
    out = g.op("Reshape", _normalized(g, grouped, [2], eps, dt), g.op("Shape", x))
    return _channel_affine(g, out, weight, bias, input.dim(), dt)


def _channel_affine(g, x, weight, bias, ndim, dt):
    """x * weight + bias with (C,) vectors broadcast over the dims after the channels."""
    spatial = list(range(1, ndim - 1))
    if weight is not None:
        x = g.op("Mul", x, g.unsqueeze(g.operand(weight, dt), spatial) if spatial else
                 g.operand(weight, dt))
    if bias is not None:
        x = g.op("Add", x, g.unsqueeze(g.operand(bias, dt), spatial) if spatial else
                 g.operand(bias, dt))
    return x


@symbolic("F.instance_norm")
def instance_norm(g, result, input, running_mean=None, running_var=None, weight=None,
                  bias=None, use_input_stats=True, momentum=0.1, eps=1e-5, **_):
    if not use_input_stats:
        return batch_norm(g, result, input, running_mean, running_var, weight, bias,
                          eps=eps)
    dt, c = result.dtype, input.shape[1]
    return g.op("InstanceNormalization", g.operand(input, dt), _param_or(g, weight, 1, c, dt),
                _param_or(g, bias, 0, c, dt), epsilon=float(eps))


@symbolic("normalize")
def normalize(g, result, input, p=2.0, dim=1, eps=1e-12, **_):
    if p not in (1, 2):
        raise g.unsupported(f"aten::normalize (p={p})")
    dt = result.dtype
    x = g.operand(input, dt)
    norm = g.reduce("ReduceL2" if p == 2 else "ReduceL1", x, [wrap_dim(dim, input.dim())],
                    True)
    return g.op("Div", x, g.op("Max", norm, g.scalar(eps, dt)))


# ---------------------------------------------------------------------------- activations
@symbolic("gelu")
def gelu(g, result, input, approximate="none", **_):
    dt = result.dtype
    x = g.operand(input, dt)
    if g.opset >= 20:
        return g.op("Gelu", x, approximate=approximate)
    if approximate == "tanh":
        cube = g.op("Mul", g.scalar(0.044715, dt), g.op("Mul", x, g.op("Mul", x, x)))
        inner = g.op("Mul", g.scalar(math.sqrt(2 / math.pi), dt), g.op("Add", x, cube))
        gate = g.op("Tanh", inner)
    else:
        gate = g.op("Erf", g.op("Mul", x, g.scalar(1 / math.sqrt(2), dt)))
    half_x = g.op("Mul", x, g.scalar(0.5, dt))
    return g.op("Mul", half_x, g.op("Add", gate, g.scalar(1, dt)))


@symbolic("leaky_relu")
def leaky_relu(g, result, input, negative_slope=0.01, *args, **_):
    return g.op("LeakyRelu", g.operand(input, result.dtype), alpha=float(negative_slope))


@symbolic("elu")
def elu(g, result, input, alpha=1.0, *args, **_):
    return g.op("Elu", g.operand(input, result.dtype), alpha=float(alpha))


@symbolic("celu")
def celu(g, result, input, alpha=1.0, *args, **_):
    return g.op("Celu", g.operand(input, result.dtype), alpha=float(alpha))


def _plain(op_type):
    def translate(g, result, input, *args, **_):
        return g.op(op_type, g.operand(input, result.dtype))
    return translate


symbolic("selu")(_plain("Selu"))
symbolic("hardswish")(_plain("HardSwish"))
symbolic("softsign")(_plain("Softsign"))


@symbolic("hardsigmoid")
def hardsigmoid(g, result, input, *args, **_):
    return g.op("HardSigmoid", g.operand(input, result.dtype), alpha=1 / 6, beta=0.5)


@symbolic("silu")
def silu(g, result, input, *args, **_):
    x = g.operand(input, result.dtype)
    return g.op("Mul", x, g.op("Sigmoid", x))


@symbolic("mish")
def mish(g, result, input, *args, **_):
    x = g.operand(input, result.dtype)
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@symbolic("softplus")
def softplus(g, result, input, beta=1.0, threshold=20.0, **_):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as torch)."""
    dt = result.dtype
    x = g.operand(input, dt)
    scaled = x if beta == 1 else g.op("Mul", x, g.scalar(beta, dt))
    soft = g.op("Softplus", scaled)
    if beta != 1:
        soft = g.op("Div", soft, g.scalar(beta, dt))
    return g.op("Where", g.op("Greater", scaled, g.scalar(threshold, dt)), x, soft)


@symbolic("logsigmoid")
def logsigmoid(g, result, input, **_):
    # -softplus(-x): log(sigmoid(x)) loses the digits of tiny sigmoids
    x = g.operand(input, result.dtype)
    return g.op("Neg", g.op("Softplus", g.op("Neg", x)))


@symbolic("tanhshrink")
def tanhshrink(g, result, input, **_):
    x = g.operand(input, result.dtype)
    return g.op("Sub", x, g.op("Tanh", x))


@symbolic("hardtanh")
def hardtanh(g, result, input, min_val=-1.0, max_val=1.0, *args, **_):
    dt = result.dtype
    return g.op("Clip", g.operand(input, dt), g.scalar(min_val, dt), g.scalar(max_val, dt))


symbolic("relu6")(lambda g, result, input, *args, **_: hardtanh(g, result, input, 0.0, 6.0))


@symbolic("threshold", "F.threshold")
def threshold(g, result, input, threshold, value, *args, **_):
    dt = result.dtype
    x = g.operand(input, dt)
    return g.op("Where", g.op("Greater", x, g.scalar(threshold, dt)), x, g.scalar(value, dt))


@symbolic("prelu")
def prelu(g, result, input, weight, **_):
    dt = result.dtype
    slope = g.operand(weight, dt)
    if weight.numel() > 1 and input.dim() > 2:   # (C,) slopes broadcast over (N, C, ...)
        slope = g.unsqueeze(slope, list(range(1, input.dim() - 1)))
    return g.op("PRelu", g.operand(input, dt), slope)


def _softmax(op_type, negate=False):
    def translate(g, result, input, dim=None, *args, **_):
        if dim is None:   # torch's implicit choice (deprecated, with a warning)
            dim = 0 if input.dim() in (0, 1, 3) else 1
        x = g.operand(input, result.dtype)
        if negate:
            x = g.op("Neg", x)
        return g.op(op_type, x, axis=wrap_dim(dim, max(input.dim(), 1)))
    return translate


symbolic("softmax")(_softmax("Softmax"))
symbolic("log_softmax")(_softmax("LogSoftmax"))
symbolic("softmin")(_softmax("Softmax", negate=True))


@symbolic("glu")
def glu(g, result, input, dim=-1, **_):
    d = wrap_dim(dim, input.dim())
    half = input.shape[d] // 2
    a, b = g.op("Split", g.value(input), g.ints([half, half]), axis=d, outputs=2)
    return g.op("Mul", a, g.op("Sigmoid", b))


# ---------------------------------------------------------------------------- dropout
def _dropout(elementwise):
    def translate(g, result, input, p=0.5, training=True, *args, **kwargs):
        training = kwargs.get("train", training)
        if not training or p == 0:
            return g.value(input)
        if not elementwise:   # ONNX's Dropout drops elements, not channels
            raise g.unsupported("aten::feature_dropout or alpha_dropout (training mode)")
        ratio = g.scalar(p, result.dtype)
        return g.op("Dropout", g.value(input), ratio, g.constant(np.asarray(True)),
                    outputs=2)[0]
    return translate


symbolic("F.dropout", "dropout")(_dropout(elementwise=True))
symbolic("F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
         "F.feature_alpha_dropout", "alpha_dropout", "feature_alpha_dropout",
         "feature_dropout")(_dropout(elementwise=False))


# ---------------------------------------------------------------------------- embedding
@symbolic("F.embedding")
def embedding(g, result, input, weight, padding_idx=None, max_norm=None, *args, **_):
    if max_norm is not None:
        raise g.unsupported("aten::embedding_renorm_ (max_norm)")
    return g.op("Gather", g.value(weight), g.operand(input, _dt.int64), axis=0)


@symbolic("one_hot")
def one_hot(g, result, tensor, num_classes=-1, **_):
    depth = g.constant(np.asarray([result.shape[-1]], dtype=np.int64))
    values = g.constant(np.asarray([0, 1], dtype=np.int64))
    return g.op("OneHot", g.operand(tensor, _dt.int64), depth, values, axis=-1)


# ---------------------------------------------------------------------------- pooling
def _pool_geometry(n, kernel_size, stride, padding):
    kernel = _ntuple(kernel_size, n)
    strides = kernel if stride is None or stride == [] else _ntuple(stride, n)
    pads = _ntuple(padding, n)
    return dict(kernel_shape=kernel, strides=strides, pads=pads + pads)


def _batched(g, input, x, spatial_dims, build):
    """Run ``build`` on an (N, C, ...) view of ``x``, adding the batch dim when absent."""
    unbatched = input.dim() == spatial_dims + 1
    if unbatched:
        x = g.unsqueeze(x, [0])
    out = build(x)
    return g.squeeze(out, [0]) if unbatched else out


def _max_pool(n):
    def translate(g, result, input, kernel_size, stride=None, padding=0, dilation=1,
                  ceil_mode=False, return_indices=False, **_):
        if return_indices:
            raise g.unsupported("aten::max_pool_with_indices")
        attrs = _pool_geometry(n, kernel_size, stride, padding)
        return _batched(g, input, g.value(input), n, lambda x: g.op(
            "MaxPool", x, dilations=_ntuple(dilation, n), ceil_mode=int(ceil_mode), **attrs))
    return translate


def _avg_pool(n):
    def translate(g, result, input, kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True, divisor_override=None, **_):
        if divisor_override is not None:
            raise g.unsupported("aten::avg_pool (divisor_override)")
        attrs = _pool_geometry(n, kernel_size, stride, padding)
        return _batched(g, input, g.value(input), n, lambda x: g.op(
            "AveragePool", x, ceil_mode=int(ceil_mode),
            count_include_pad=int(count_include_pad), **attrs))
    return translate


def _adaptive_pool(n, op_type, global_op):
    def translate(g, result, input, output_size, return_indices=False, **_):
        if return_indices:
            raise g.unsupported("aten::adaptive_max_pool (return_indices)")
        in_size = list(input.shape[-n:])
        out_size = list(result.shape[-n:])
        if all(s == 1 for s in out_size):
            build = lambda x: g.op(global_op, x)   # noqa: E731
        elif all(i % o == 0 for i, o in zip(in_size, out_size)):
            kernel = [i // o for i, o in zip(in_size, out_size)]
            build = lambda x: g.op(op_type, x, kernel_shape=kernel, strides=kernel)  # noqa: E731
        else:
            raise g.unsupported(f"aten::adaptive_{op_type.lower()} (output size {out_size} "
                                f"does not divide input size {in_size})")
        return _batched(g, input, g.value(input), n, build)
    return translate


for _n in (1, 2, 3):
    symbolic(f"max_pool{_n}d")(_max_pool(_n))
    symbolic(f"avg_pool{_n}d")(_avg_pool(_n))
    symbolic(f"adaptive_avg_pool{_n}d")(_adaptive_pool(_n, "AveragePool", "GlobalAveragePool"))
    symbolic(f"adaptive_max_pool{_n}d")(_adaptive_pool(_n, "MaxPool", "GlobalMaxPool"))


# ---------------------------------------------------------------------------- padding, resizing
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


@symbolic("pad")
def pad(g, result, input, pad, mode="constant", value=None, **_):
    if mode == "circular":
        g.require("aten::pad (circular)", 19)
    n = input.dim()
    begins, ends = [0] * n, [0] * n
    for i in range(len(pad) // 2):   # torch's pad lists (begin, end) from the last dim back
        begins[n - 1 - i], ends[n - 1 - i] = pad[2 * i], pad[2 * i + 1]
    dt = result.dtype
    fill = g.scalar(value or 0, dt) if mode == "constant" else None
    return g.op("Pad", g.operand(input, dt), g.ints(begins + ends), fill,
                mode=_PAD_MODES[mode])


@symbolic("interpolate", "upsample")
def interpolate(g, result, input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, *args, **_):
    if mode not in ("nearest", "linear", "bilinear", "trilinear"):
        raise g.unsupported(f"aten::upsample_{mode}")
    scales = [1.0, 1.0] + [o / i for o, i in zip(result.shape[2:], input.shape[2:])]
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
             "nearest_mode": "floor"} if mode == "nearest" else {
        "mode": "linear", "coordinate_transformation_mode":
        "align_corners" if align_corners else "pytorch_half_pixel"}
    return g.op("Resize", g.operand(input, result.dtype), None,
                g.constant(np.asarray(scales, dtype=np.float32)), **attrs)


@symbolic("pixel_shuffle")
def pixel_shuffle(g, result, input, upscale_factor, **_):
    return g.op("DepthToSpace", g.value(input), blocksize=int(upscale_factor), mode="CRD")


# ---------------------------------------------------------------------------- attention
@symbolic("scaled_dot_product_attention")
def scaled_dot_product_attention(g, result, query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, **_):
    if dropout_p > 0:
        raise g.unsupported("aten::scaled_dot_product_attention (dropout_p > 0)")
    if enable_gqa and query.shape[-3] != key.shape[-3]:
        raise g.unsupported("aten::scaled_dot_product_attention (grouped-query attention)")
    dt = result.dtype
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    return _attend(g, g.operand(query, dt), g.operand(key, dt), g.operand(value, dt),
                   _mask_bias(g, attn_mask, dt), is_causal, (query.shape[-2], key.shape[-2]),
                   key.dim(), scale, dt)[0]


def _mask_bias(g, mask, dt):
    """An additive mask: float masks as they are, boolean ones (True = keep) as 0 / -inf."""
    if mask is None:
        return None
    if mask.dtype is _dt.bool_:
        return g.op("Where", g.value(mask), g.scalar(0, dt), g.scalar(-math.inf, dt))
    return g.operand(mask, dt)


def _attend(g, q, k, v, bias, is_causal, sizes, ndim, scale, dt):
    """softmax(q k^T * scale + bias) v; returns the output and the probabilities."""
    perm = list(range(ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    scores = g.op("MatMul", g.op("Mul", q, g.scalar(scale, dt)), g.transpose(k, perm))
    if is_causal:
        keep = np.tril(np.ones(sizes, dtype=bool))
        scores = g.op("Where", g.constant(keep), scores, g.scalar(-math.inf, dt))
    if bias is not None:
        scores = g.op("Add", scores, bias)
    probs = g.op("Softmax", scores, axis=-1)
    return g.op("MatMul", probs, v), probs


@symbolic("multi_head_attention_forward")
def multi_head_attention_forward(
        g, result, query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
        in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
        training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
        use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False, **_):
    """nn.MultiheadAttention over (L, N, E): heads split by reshapes that keep L and N
    dynamic, [N, H, L, D] attention, one output projection."""
    for name, bad in (("bias_k/bias_v", bias_k is not None), ("add_zero_attn", add_zero_attn),
                      ("static_k/static_v", static_k is not None or static_v is not None),
                      ("dropout in training", training and dropout_p > 0)):
        if bad:
            raise g.unsupported(f"aten::multi_head_attention_forward ({name})")
    dt = query.dtype
    batched = query.dim() == 3
    q, k, v = (g.operand(t, dt) for t in (query, key, value))
    if not batched:
        q, k, v = (g.unsqueeze(t, [1]) for t in (q, k, v))
    e, heads = embed_dim_to_check, num_heads
    head_dim = e // heads
    weights = ((q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight
               else (in_proj_weight,) * 3)
    projected = []
    for i, (x, w) in enumerate(zip((q, k, v), weights)):
        rows = slice(0, e) if use_separate_proj_weight else slice(i * e, (i + 1) * e)
        y = _project(g, x, w, in_proj_bias, rows, i * e, dt)
        y = g.op("Reshape", y, g.ints([0, 0, heads, head_dim]))      # L, N, H, D
        projected.append(g.transpose(y, [1, 2, 0, 3]))              # N, H, L, D
    bias = _mha_bias(g, attn_mask, key_padding_mask, heads, dt)
    causal = is_causal and attn_mask is None
    out, probs = _attend(g, *projected, bias, causal, (query.shape[0], key.shape[0]), 4,
                         1 / math.sqrt(head_dim), dt)
    out = g.op("Reshape", g.transpose(out, [2, 0, 1, 3]), g.ints([0, 0, e]))
    out = g.op("MatMul", out, g.transpose(g.value(out_proj_weight), [1, 0]))
    if out_proj_bias is not None:
        out = g.op("Add", out, g.operand(out_proj_bias, dt))
    if not batched:
        out = g.squeeze(out, [1])
    if not need_weights:
        return out
    if average_attn_weights:
        probs = g.reduce("ReduceMean", probs, [1], False)
    return out, (g.squeeze(probs, [0]) if not batched else probs)


def _project(g, x, weight, bias, rows, offset, dt):
    """x @ weight[rows].T + bias[rows] (rows of the packed in-projection)."""
    w = g.value(weight)
    if weight.shape[0] != rows.stop - rows.start:
        w = g.op("Slice", w, g.ints([rows.start]), g.ints([rows.stop]), g.ints([0]))
    y = g.op("MatMul", x, g.transpose(w, [1, 0]))
    if bias is None:
        return y
    b = g.op("Slice", g.operand(bias, dt), g.ints([offset]), g.ints([offset + rows.stop -
                                                                     rows.start]), g.ints([0]))
    return g.op("Add", y, b)


def _mha_bias(g, attn_mask, key_padding_mask, heads, dt):
    """The additive (N, H, L, S)-broadcastable mask from attn_mask and key_padding_mask
    (boolean masks: True = masked out, as nn.MultiheadAttention has them)."""
    bias = None
    if attn_mask is not None:
        bias = _blocked(g, attn_mask, dt)
        if attn_mask.dim() == 3:   # (N * H, L, S)
            bias = g.op("Reshape", bias, g.ints([-1, heads, *attn_mask.shape[1:]]))
    if key_padding_mask is not None:
        kpm = g.unsqueeze(_blocked(g, key_padding_mask, dt), [1, 2])   # N, 1, 1, S
        bias = kpm if bias is None else g.op("Add", bias, kpm)
    return bias


def _blocked(g, mask, dt):
    if mask.dtype is _dt.bool_:
        return g.op("Where", g.value(mask), g.scalar(-math.inf, dt), g.scalar(0, dt))
    return g.operand(mask, dt)
