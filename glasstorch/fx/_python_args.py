"""How torch 2.13's Python-level functions hand a call to ``__torch_function__``: how many
arguments go positionally and which parameters by keyword (always, with their values or
defaults). Tracing records calls the same way, so node args and kwargs match torch's
(``F.relu(x)`` is ``relu(x, inplace=False)``). Facts read off torch's behaviour."""

# public name -> (number of positional arguments, keyword parameters in order)
PYTHON_LEVEL_ARGS = {
    "torch.Tensor.__array__": (1, ('dtype',)),
    "torch.Tensor.__repr__": (1, ('tensor_contents',)),
    "torch.Tensor.backward": (1, ('gradient', 'retain_graph', 'create_graph', 'inputs')),
    "torch.Tensor.istft": (
        2, ('hop_length', 'win_length', 'window', 'center', 'normalized', 'onesided', 'length',
            'return_complex')),
    "torch.Tensor.lu": (1, ('pivot', 'get_infos')),
    "torch.Tensor.module_load": (2, ('assign',)),
    "torch.Tensor.norm": (1, ('p', 'dim', 'keepdim', 'dtype')),
    "torch.Tensor.split": (2, ('dim',)),
    "torch.Tensor.stft": (
        2, ('hop_length', 'win_length', 'window', 'center', 'pad_mode', 'normalized', 'onesided',
            'return_complex', 'align_to_window')),
    "torch.Tensor.unique": (1, ('sorted', 'return_inverse', 'return_counts', 'dim')),
    "torch.Tensor.unique_consecutive": (1, ('return_inverse', 'return_counts', 'dim')),
    "torch.cdist": (2, ('p', 'compute_mode')),
    "torch.lu": (1, ('pivot', 'get_infos', 'out')),
    "torch.nn.functional.adaptive_max_pool1d": (2, ('return_indices',)),
    "torch.nn.functional.adaptive_max_pool1d_with_indices": (2, ('return_indices',)),
    "torch.nn.functional.adaptive_max_pool2d": (2, ('return_indices',)),
    "torch.nn.functional.adaptive_max_pool2d_with_indices": (2, ('return_indices',)),
    "torch.nn.functional.adaptive_max_pool3d": (2, ('return_indices',)),
    "torch.nn.functional.adaptive_max_pool3d_with_indices": (2, ('return_indices',)),
    "torch.nn.functional.affine_grid": (2, ('align_corners',)),
    "torch.nn.functional.alpha_dropout": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.batch_norm": (3, ('weight', 'bias', 'training', 'momentum', 'eps')),
    "torch.nn.functional.binary_cross_entropy": (
        2, ('weight', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.binary_cross_entropy_with_logits": (
        2, ('weight', 'size_average', 'reduce', 'reduction', 'pos_weight')),
    "torch.nn.functional.celu": (1, ('alpha', 'inplace')),
    "torch.nn.functional.cosine_embedding_loss": (
        3, ('margin', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.cross_entropy": (
        2, ('weight', 'size_average', 'ignore_index', 'reduce', 'reduction', 'label_smoothing')),
    "torch.nn.functional.ctc_loss": (4, ('blank', 'reduction', 'zero_infinity')),
    "torch.nn.functional.dropout": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.dropout1d": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.dropout2d": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.dropout3d": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.elu": (1, ('alpha', 'inplace')),
    "torch.nn.functional.embedding": (
        2, ('padding_idx', 'max_norm', 'norm_type', 'scale_grad_by_freq', 'sparse')),
    "torch.nn.functional.embedding_bag": (
        2, ('offsets', 'max_norm', 'norm_type', 'scale_grad_by_freq', 'mode', 'sparse',
            'per_sample_weights', 'include_last_offset', 'padding_idx')),
    "torch.nn.functional.feature_alpha_dropout": (1, ('p', 'training', 'inplace')),
    "torch.nn.functional.fold": (3, ('dilation', 'padding', 'stride')),
    "torch.nn.functional.fractional_max_pool2d": (
        2, ('output_size', 'output_ratio', 'return_indices', '_random_samples')),
    "torch.nn.functional.fractional_max_pool2d_with_indices": (
        2, ('output_size', 'output_ratio', 'return_indices', '_random_samples')),
    "torch.nn.functional.fractional_max_pool3d": (
        2, ('output_size', 'output_ratio', 'return_indices', '_random_samples')),
    "torch.nn.functional.fractional_max_pool3d_with_indices": (
        2, ('output_size', 'output_ratio', 'return_indices', '_random_samples')),
    "torch.nn.functional.gaussian_nll_loss": (3, ('full', 'eps', 'reduction')),
    "torch.nn.functional.glu": (1, ('dim',)),
    "torch.nn.functional.grid_sample": (2, ('mode', 'padding_mode', 'align_corners')),
    "torch.nn.functional.group_norm": (2, ('weight', 'bias', 'eps')),
    "torch.nn.functional.gumbel_softmax": (1, ('tau', 'hard', 'eps', 'dim')),
    "torch.nn.functional.hardsigmoid": (1, ('inplace',)),
    "torch.nn.functional.hardswish": (1, ('inplace',)),
    "torch.nn.functional.hardtanh": (1, ('min_val', 'max_val', 'inplace')),
    "torch.nn.functional.hinge_embedding_loss": (
        2, ('margin', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.huber_loss": (2, ('reduction', 'delta', 'weight')),
    "torch.nn.functional.instance_norm": (
        1, ('running_mean', 'running_var', 'weight', 'bias', 'use_input_stats', 'momentum',
            'eps')),
    "torch.nn.functional.interpolate": (
        1, ('size', 'scale_factor', 'mode', 'align_corners', 'recompute_scale_factor',
            'antialias')),
    "torch.nn.functional.kl_div": (2, ('size_average', 'reduce', 'reduction', 'log_target')),
    "torch.nn.functional.l1_loss": (2, ('size_average', 'reduce', 'reduction')),
    "torch.nn.functional.layer_norm": (2, ('weight', 'bias', 'eps')),
    "torch.nn.functional.leaky_relu": (1, ('negative_slope', 'inplace')),
    "torch.nn.functional.linear_cross_entropy": (
        3, ('linear_bias', 'weight', 'reduction', 'ignore_index', 'label_smoothing', 'options')),
    "torch.nn.functional.local_response_norm": (2, ('alpha', 'beta', 'k')),
    "torch.nn.functional.log_softmax": (1, ('dim', '_stacklevel', 'dtype')),
    "torch.nn.functional.lp_pool1d": (3, ('stride', 'ceil_mode')),
    "torch.nn.functional.lp_pool2d": (3, ('stride', 'ceil_mode')),
    "torch.nn.functional.lp_pool3d": (3, ('stride', 'ceil_mode')),
    "torch.nn.functional.margin_ranking_loss": (
        3, ('margin', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.max_pool1d": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_pool1d_with_indices": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_pool2d": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_pool2d_with_indices": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_pool3d": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_pool3d_with_indices": (
        2, ('stride', 'padding', 'dilation', 'ceil_mode', 'return_indices')),
    "torch.nn.functional.max_unpool1d": (3, ('stride', 'padding', 'output_size')),
    "torch.nn.functional.max_unpool2d": (3, ('stride', 'padding', 'output_size')),
    "torch.nn.functional.max_unpool3d": (3, ('stride', 'padding', 'output_size')),
    "torch.nn.functional.mish": (1, ('inplace',)),
    "torch.nn.functional.mse_loss": (2, ('size_average', 'reduce', 'reduction', 'weight')),
    "torch.nn.functional.multi_head_attention_forward": (
        13, ('training', 'key_padding_mask', 'need_weights', 'attn_mask', 'is_causal',
            'use_separate_proj_weight', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight',
            'static_k', 'static_v', 'average_attn_weights')),
    "torch.nn.functional.multi_margin_loss": (
        2, ('p', 'margin', 'weight', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.multilabel_margin_loss": (2, ('size_average', 'reduce', 'reduction')),
    "torch.nn.functional.multilabel_soft_margin_loss": (
        2, ('weight', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.nll_loss": (
        2, ('weight', 'size_average', 'ignore_index', 'reduce', 'reduction')),
    "torch.nn.functional.normalize": (1, ('p', 'dim', 'eps', 'out')),
    "torch.nn.functional.pad": (2, ('mode', 'value')),
    "torch.nn.functional.poisson_nll_loss": (
        2, ('log_input', 'full', 'size_average', 'eps', 'reduce', 'reduction')),
    "torch.nn.functional.relu": (1, ('inplace',)),
    "torch.nn.functional.relu6": (1, ('inplace',)),
    "torch.nn.functional.rms_norm": (2, ('weight', 'eps')),
    "torch.nn.functional.selu": (1, ('inplace',)),
    "torch.nn.functional.silu": (1, ('inplace',)),
    "torch.nn.functional.smooth_l1_loss": (2, ('size_average', 'reduce', 'reduction', 'beta')),
    "torch.nn.functional.soft_margin_loss": (2, ('size_average', 'reduce', 'reduction')),
    "torch.nn.functional.softmax": (1, ('dim', '_stacklevel', 'dtype')),
    "torch.nn.functional.softmin": (1, ('dim', '_stacklevel', 'dtype')),
    "torch.nn.functional.triplet_margin_loss": (
        3, ('margin', 'p', 'eps', 'swap', 'size_average', 'reduce', 'reduction')),
    "torch.nn.functional.triplet_margin_with_distance_loss": (
        3, ('distance_function', 'margin', 'swap', 'reduction')),
    "torch.nn.functional.unfold": (2, ('dilation', 'padding', 'stride')),
    "torch.norm": (1, ('p', 'dim', 'keepdim', 'out', 'dtype')),
    "torch.split": (2, ('dim',)),
    "torch.stft": (
        2, ('hop_length', 'win_length', 'window', 'center', 'pad_mode', 'normalized', 'onesided',
            'return_complex', 'align_to_window')),
    "torch.tensordot": (2, ('dims', 'out')),
    "torch.unique": (1, ('sorted', 'return_inverse', 'return_counts', 'dim')),
    "torch.unique_consecutive": (1, ('return_inverse', 'return_counts', 'dim')),
}
