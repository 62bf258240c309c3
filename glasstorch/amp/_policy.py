"""Autocast's per-op policy tables, one per device type, after torch's autocast op lists.

Names are entry points: ``"mm"`` is ``glasstorch.mm``, ``"Tensor.__rmatmul__"`` a Tensor
method, ``"F.linear"`` ``glasstorch.nn.functional.linear``, ``"linalg.inv"``
``glasstorch.linalg.inv``. A Tensor method that is the same function as the namespace op
(``Tensor.mm is glasstorch.mm``) follows it automatically. Ops glasstorch does not have are
skipped.

Policies:
- ``lower``: floating inputs (not float64) are cast to the autocast dtype.
- ``fp32``: floating inputs (not float64) are cast to float32.
- ``fp32_opt``: run with ``dtype=float32`` unless a dtype was given (CUDA's
  fp32_set_opt_dtype: softmax, sum, cumsum, ...), when the first input is floating.
- ``promote``: floating inputs are cast to the widest floating input dtype.
- ``banned``: raises (CUDA's binary_cross_entropy).
- ``einsum``, ``inner``, ``matrix_power``: composites that torch's CPU autocast casts only
  when they reach a listed kernel (bmm/mm/matmul): einsum with a contracted index over
  several operands, inner of a matrix, matrix_power with |n| >= 2 (n = -1 is an fp32
  inverse).
"""

# glasstorch's recurrent layers (nn.LSTM/GRU/RNN and torch.lstm/gru/rnn_*) all run through
# one internal kernel; torch autocasts it as mkldnn_rnn_layer for LSTM on the CPU and as the
# cuDNN RNN (every mode) on CUDA. ("module:attr" entries wrap a module attribute.)
RNN_KERNEL = "glasstorch._ops.rnn:_rnn_stack"

# --- CPU (torch's KERNEL_CPU lists; composite ops that torch decomposes into listed ops,
# such as einsum/tensordot -> bmm, are listed where torch's results show their dtype) ---
CPU_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "bmm", "mm", "baddbmm", "addmm", "addbmm", "matmul", "Tensor.__rmatmul__",
    "prelu", "tensordot", "chain_matmul",
    "linalg.vecdot", "linalg.matmul", "linalg.multi_dot",
    "F.linear", "linear", "F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d",
    "F.conv_transpose2d", "F.conv_transpose3d", "F.prelu", "F.scaled_dot_product_attention",
    "scaled_dot_product_attention",
)
CPU_FP32 = (
    "prod", "quantile", "nanquantile", "stft", "cdist", "trace", "view_as_complex", "polar",
    "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
    "pinverse", "geqrf", "qr", "svd", "triangular_solve",
    "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.svdvals", "linalg.eig", "linalg.eigh",
    "linalg.eigvals", "linalg.eigvalsh", "linalg.inv", "linalg.lstsq", "linalg.solve",
    "linalg.cond",
    "F.avg_pool3d", "F.max_pool3d", "F.adaptive_avg_pool3d", "F.adaptive_max_pool3d",
    "F.max_unpool2d", "F.max_unpool3d", "F.fractional_max_pool2d", "F.fractional_max_pool3d",
    "F.grid_sample", "F.binary_cross_entropy", "F.binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits", "F.mse_loss", "F.l1_loss", "F.smooth_l1_loss",
    "F.huber_loss", "F.cross_entropy", "F.nll_loss", "F.kl_div", "kl_div",
    "F.cosine_embedding_loss", "cosine_embedding_loss", "F.hinge_embedding_loss",
    "hinge_embedding_loss", "F.poisson_nll_loss", "poisson_nll_loss", "F.margin_ranking_loss",
    "margin_ranking_loss", "F.soft_margin_loss", "F.triplet_margin_loss",
    "triplet_margin_loss", "F.multi_margin_loss", "F.multilabel_margin_loss", "F.ctc_loss",
    "ctc_loss",
)
CPU_PROMOTE = ("cat", "stack", "index_copy", "concat", "concatenate")

# --- CUDA (torch's KERNEL_CUDA lists) ---
CUDA_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "convolution", "prelu", "addmm", "addmv", "addr", "matmul",
    "Tensor.__rmatmul__", "einsum", "mm", "mv", "addbmm", "baddbmm", "bmm", "chain_matmul",
    "linalg.vecdot", "linalg.matmul", "linalg.multi_dot", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "tensordot", RNN_KERNEL,
    "F.linear", "linear", "F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d",
    "F.conv_transpose2d", "F.conv_transpose3d", "F.prelu", "F.scaled_dot_product_attention",
    "scaled_dot_product_attention",
)
CUDA_FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "Tensor.__pow__", "Tensor.__rpow__",
    "float_power", "frobenius_norm", "nuclear_norm", "cosine_similarity", "dist", "pdist",
    "cdist", "renorm", "logsumexp", "norm", "layer_norm", "group_norm",
    "F.softplus", "F.layer_norm", "F.group_norm", "F.cosine_similarity", "F.pdist",
    "F.interpolate", "F.upsample", "F.upsample_nearest", "F.upsample_bilinear",
    "F.poisson_nll_loss", "poisson_nll_loss", "F.cosine_embedding_loss",
    "cosine_embedding_loss", "F.nll_loss", "F.cross_entropy", "F.hinge_embedding_loss",
    "hinge_embedding_loss", "F.kl_div", "kl_div", "F.l1_loss", "F.smooth_l1_loss",
    "F.huber_loss", "F.mse_loss", "F.margin_ranking_loss", "margin_ranking_loss",
    "F.multilabel_margin_loss", "F.soft_margin_loss", "F.triplet_margin_loss",
    "triplet_margin_loss", "F.multi_margin_loss", "F.binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits",
)
CUDA_FP32_OPT = (
    "prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum", "linalg.vector_norm",
    "linalg.matrix_norm", "F.softmax", "F.log_softmax",
)
CUDA_PROMOTE = (
    "addcdiv", "addcmul", "atan2", "bilinear", "F.bilinear", "cross", "linalg.cross", "dot",
    "vdot", "grid_sampler", "index_put", "scatter_add", "cat", "stack", "index_copy",
    "concat", "concatenate",
)
CUDA_BANNED = ("F.binary_cross_entropy",)

# F.pad is an fp32 op on the CPU only for the kernels torch lists (reflection_pad1d/2d,
# replication_pad1d/2d/3d), chosen by mode and len(pad) // 2; a policy of its own.
CPU_PAD_FP32 = {("reflect", 1), ("reflect", 2), ("replicate", 1), ("replicate", 2),
                ("replicate", 3)}

_MATRIX_POWER = ("matrix_power", "linalg.matrix_power")
TABLES = {
    "cpu": {"lower": CPU_LOWER, "fp32": CPU_FP32, "promote": CPU_PROMOTE,
            "einsum": ("einsum",), "inner": ("inner",), "matrix_power": _MATRIX_POWER,
            "lstm_only": (RNN_KERNEL,)},
    "cuda": {"lower": CUDA_LOWER, "fp32": CUDA_FP32, "fp32_opt": CUDA_FP32_OPT,
             "promote": CUDA_PROMOTE, "banned": CUDA_BANNED, "inner": ("inner",),
             "matrix_power": _MATRIX_POWER},
}
