"""Vision Transformer (Dosovitskiy et al., 2020) with torchvision's module names."""

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from ... import cat, empty, nn, zeros
from ..ops.misc import MLP, Conv2dNormActivation
from ..transforms._presets import ImageClassification
from ..transforms.functional import InterpolationMode
from ._api import (
    IMAGENET1K_CATEGORIES,
    Weights,
    WeightsEnum,
    _load_weights,
    _register,
    _resolve_weights,
)

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "vit_b_16"]


_LAYER_NORM = partial(nn.LayerNorm, eps=1e-6)


def _check(cond, message):
    # torch._assert raises AssertionError; torchvision's ViT uses it for input checks
    if not cond:
        raise AssertionError(message)


class ConvStemConfig(NamedTuple):
    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: Callable = nn.BatchNorm2d
    activation_layer: Callable = nn.ReLU


class MLPBlock(MLP):
    """The transformer's feed-forward block: Linear, GELU, Dropout, Linear, Dropout."""

    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints saved before version 2 (torchvision's released ViT weights among them)
        # name the two Linear layers linear_1 / linear_2 instead of 0 / 3
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(2):
                for kind in ("weight", "bias"):
                    old_key = f"{prefix}linear_{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class EncoderBlock(nn.Module):
    """Pre-norm transformer layer: x + attn(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=_LAYER_NORM):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        _check(input.dim() == 3,
               f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Learned position embedding, dropout, ``num_layers`` EncoderBlocks and a final norm."""

    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=_LAYER_NORM):
        super().__init__()
        self.pos_embedding = nn.Parameter(empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers = OrderedDict()
        for i in range(num_layers):
            layers[f"encoder_layer_{i}"] = EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                        attention_dropout, norm_layer)
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        _check(input.dim() == 3,
               f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))


class VisionTransformer(nn.Module):
    """ViT: patches embedded by ``conv_proj``, a class token, ``encoder``, ``heads``.

    Every size is configurable, e.g. ``VisionTransformer(image_size=32, patch_size=8,
    num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, num_classes=10)``.
    """

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=_LAYER_NORM, conv_stem_configs=None):
        super().__init__()
        _check(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer

        if conv_stem_configs is not None:
            # convolutional stem (Xiao et al., 2021) in place of the single patch convolution
            seq_proj = nn.Sequential()
            prev_channels = 3
            for i, cfg in enumerate(conv_stem_configs):
                seq_proj.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
                    prev_channels, cfg.out_channels, kernel_size=cfg.kernel_size,
                    stride=cfg.stride, norm_layer=cfg.norm_layer,
                    activation_layer=cfg.activation_layer))
                prev_channels = cfg.out_channels
            seq_proj.add_module("conv_last", nn.Conv2d(prev_channels, hidden_dim, kernel_size=1))
            self.conv_proj = seq_proj
        else:
            self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)

        seq_length = (image_size // patch_size) ** 2
        self.class_token = nn.Parameter(zeros(1, 1, hidden_dim))
        seq_length += 1
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length

        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)

        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = (self.conv_proj.in_channels * self.conv_proj.kernel_size[0]
                      * self.conv_proj.kernel_size[1])
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        elif isinstance(getattr(self.conv_proj, "conv_last", None), nn.Conv2d):
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            if last.bias is not None:
                nn.init.zeros_(last.bias)
        if hasattr(self.heads, "pre_logits") and isinstance(self.heads.pre_logits, nn.Linear):
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        _check(h == self.image_size,
               f"Wrong image height! Expected {self.image_size} but got {h}!")
        _check(w == self.image_size,
               f"Wrong image width! Expected {self.image_size} but got {w}!")
        n_h, n_w = h // p, w // p
        # (n, c, h, w) -> (n, hidden_dim, n_h, n_w) -> (n, n_h * n_w, hidden_dim)
        x = self.conv_proj(x)
        x = x.reshape(n, self.hidden_dim, n_h * n_w)
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


_IMAGENET = {"categories": IMAGENET1K_CATEGORIES}


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights(
        "https://download.pytorch.org/models/vit_b_16-c867db91.pth",
        partial(ImageClassification, crop_size=224),
        {**_IMAGENET, "min_size": (224, 224), "num_params": 86567656})
    IMAGENET1K_SWAG_E2E_V1 = Weights(
        "https://download.pytorch.org/models/vit_b_16_swag-9ac1b537.pth",
        partial(ImageClassification, crop_size=384, resize_size=384,
                interpolation=InterpolationMode.BICUBIC),
        {**_IMAGENET, "min_size": (384, 384), "num_params": 86859496})
    IMAGENET1K_SWAG_LINEAR_V1 = Weights(
        "https://download.pytorch.org/models/vit_b_16_lc_swag-4e70ced5.pth",
        partial(ImageClassification, crop_size=224, resize_size=224,
                interpolation=InterpolationMode.BICUBIC),
        {**_IMAGENET, "min_size": (224, 224), "num_params": 86567656})
    DEFAULT = IMAGENET1K_V1


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights,
                        enum_cls, progress, kwargs):
    member, source = _resolve_weights(weights, enum_cls, kwargs,
                                      fixed=("num_classes", "image_size"))
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
                              mlp_dim=mlp_dim, **kwargs)
    return _load_weights(model, member, source, progress)


@_register
def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16. ``weights``: None, or a local state_dict file / dict to load."""
    return _vision_transformer(16, 12, 12, 768, 3072, weights, ViT_B_16_Weights, progress,
                               kwargs)
