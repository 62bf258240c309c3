"""glasstorch.onnx.export: ONNX Runtime runs each exported graph and agrees with glasstorch's
forward (also at another batch size, through dynamic axes); names, saving, arguments and
errors follow torch.onnx.export, with torch's own exporter as the reference for names."""

import io
import os
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import glasstorch as torch  # noqa: E402
import glasstorch.nn.functional as F  # noqa: E402
import glasstorch.onnx  # noqa: E402,F401
from glasstorch import nn  # noqa: E402
from glasstorch.onnx.errors import OnnxExporterError, UnsupportedOperatorError  # noqa: E402


# ---------------------------------------------------------------------------- helpers
def export_bytes(model, args, **kwargs):
    kwargs.setdefault("dynamo", False)
    buf = io.BytesIO()
    torch.onnx.export(model, args, buf, **kwargs)
    return buf.getvalue()


def run_onnx(data, args):
    """Run the exported model on ``args`` (in graph-input order) with ONNX Runtime."""
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), args)}
    return sess.run(None, feeds)


def flat_outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_runs_like_forward(model, args, more_args=(), dynamic=(0,), atol=1e-5, **kwargs):
    """Export with dims ``dynamic`` of every input and output dynamic; check the graph and
    compare ONNX Runtime with the forward on ``args`` and on each of ``more_args``."""
    n_out = len(flat_outputs(model(*args)))
    in_names = [f"in{i}" for i in range(len(args))]
    out_names = [f"out{i}" for i in range(n_out)]
    axes = {n: {d: f"{n}_dim{d}" for d in dynamic} for n in in_names + out_names}
    kwargs.setdefault("dynamic_axes", axes)
    data = export_bytes(model, args, input_names=in_names, output_names=out_names, **kwargs)
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto)
    for a in (args, *more_args):
        got = run_onnx(data, a)
        want = [t.detach().numpy() for t in flat_outputs(model(*a))]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, atol=atol, rtol=1e-5)
    return proto


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def node_types(proto):
    return {n.op_type for n in proto.graph.node}


def randomize_batchnorm(model):
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class EmbeddingLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 5)

    def forward(self, ids):
        return F.gelu(self.fc(self.norm(self.emb(ids)))).mean(1)


class CumProd(nn.Module):   # an operator without an ONNX translation
    def forward(self, x):
        return torch.cumprod(x, 0) + 1


# ---------------------------------------------------------------------------- models
def test_mlp_runs_like_forward_and_initializers_are_state_dict_keys():
    torch.manual_seed(0)
    model = MLP().eval()
    proto = assert_runs_like_forward(model, (torch.randn(2, 4),), [(torch.randn(7, 4),)])
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Relu", "Gemm"]
    assert [n.name for n in proto.graph.node] == ["/fc1/Gemm", "/Relu", "/fc2/Gemm"]
    assert proto.opset_import[0].version == 20


def test_digits_cnn():
    from glasstorch.examples.digits import DigitsCNN
    torch.manual_seed(0)
    model = DigitsCNN().eval()
    proto = assert_runs_like_forward(model, (torch.randn(2, 1, 8, 8),),
                                     [(torch.randn(5, 1, 8, 8),)])
    assert {"Conv", "MaxPool", "Gemm"} <= node_types(proto)
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())


def test_resnet18_small_input():
    from glasstorch.vision.models import resnet18
    torch.manual_seed(0)
    model = randomize_batchnorm(resnet18(num_classes=10)).eval()
    proto = assert_runs_like_forward(model, (torch.randn(1, 3, 32, 32),),
                                     [(torch.randn(2, 3, 32, 32),)], atol=1e-4)
    assert {"Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool", "Add"} <= \
        node_types(proto)
    keys = [k for k in model.state_dict() if not k.endswith("num_batches_tracked")]
    assert [i.name for i in proto.graph.initializer] == keys


def test_batchnorm_and_pooling_model():
    torch.manual_seed(0)
    model = randomize_batchnorm(nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.2),
        nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2),
        nn.BatchNorm2d(8), nn.SiLU(), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Tanh(), nn.Dropout(0.5), nn.Linear(16, 4),
        nn.LogSoftmax(-1))).eval()
    proto = assert_runs_like_forward(model, (torch.randn(2, 3, 16, 16),),
                                     [(torch.randn(3, 3, 16, 16),)])
    assert "Dropout" not in node_types(proto)
    keys = [k for k in model.state_dict() if not k.endswith("num_batches_tracked")]
    assert [i.name for i in proto.graph.initializer] == keys


def test_embedding_layernorm_model():
    torch.manual_seed(0)
    model = EmbeddingLayerNorm().eval()
    proto = assert_runs_like_forward(model, (torch.randint(0, 20, (2, 7)),),
                                     [(torch.randint(0, 20, (4, 7)),)])
    assert {"Gather", "LayerNormalization", "Gelu"} <= node_types(proto)


def test_transformer_encoder_layer_with_dynamic_batch_and_sequence():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True,
                                       activation="gelu").eval()
    assert_runs_like_forward(layer, (torch.randn(2, 5, 16),), [(torch.randn(3, 8, 16),)],
                             dynamic=(0, 1))


def test_multihead_attention_masks_and_weights():
    torch.manual_seed(0)

    class Attend(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 4)

        def forward(self, q, kv, padding):
            return self.attn(q, kv, kv, key_padding_mask=padding)

    padding = torch.tensor([[False] * 6 + [True], [False] * 7])
    model = Attend().eval()
    assert_runs_like_forward(model, (torch.randn(5, 2, 16), torch.randn(7, 2, 16), padding),
                             dynamic=())

    class Variants(nn.Module):
        def __init__(self):
            super().__init__()
            self.cross = nn.MultiheadAttention(16, 2, kdim=6, vdim=5, bias=False,
                                               batch_first=True)
            self.masked = nn.MultiheadAttention(16, 4)

        def forward(self, q, k, v, mask):
            per_head = self.cross(q, k, v, average_attn_weights=False)
            unbatched = self.masked(q[0], q[0], q[0], attn_mask=mask)
            blocked = self.masked(q[0], q[0], q[0], attn_mask=mask > 0, need_weights=False)
            return (*per_head, *unbatched, blocked[0])

    mask = torch.randn(3, 3) - 9 * torch.eye(3)   # keeps the diagonal: no row fully masked
    assert_runs_like_forward(Variants().eval(), (torch.randn(2, 3, 16), torch.randn(2, 4, 6),
                                                  torch.randn(2, 4, 5), mask), dynamic=())


def test_functional_operators():
    class Ops(nn.Module):
        def forward(self, x, y, idx):
            a = (x + 1) * 2 - y / 3
            a = a ** 2 + torch.sqrt(x.abs() + 1) - torch.exp(-x) + torch.log(x * x + 1)
            b = a.mean(1, keepdim=True) + a.sum(dim=(1, 2)).unsqueeze(-1).unsqueeze(-1)
            c = torch.cat([a, b.expand_as(a)], dim=2).permute(0, 2, 1).transpose(1, 2)
            d = c[:, 1:, ::2] * 3.0
            e = torch.stack([d.reshape(d.shape[0], -1), -d.flatten(1)], dim=1).flatten(1)
            first, second = e.chunk(2, dim=1)
            f = torch.where(first > 0, first, second).clamp(-1, 1)
            f = f.masked_fill(f < 0, 0.5)
            g = x[:, 0] + x[..., -1, :].sum(-1, keepdim=True) + x[:, None, 1].squeeze(1)
            h = x.max(dim=2)[0].amax(-1) + x.min(dim=1).values.sum(-1) + \
                x.argmax(1).float().mean(-1)
            k = torch.matmul(x, y.transpose(1, 2)).softmax(-1)
            lv = x.var(dim=-1) + x.std(-1, keepdim=True).squeeze(-1) + x.norm(dim=-1)
            n = torch.tanh(x).sigmoid().cumsum(1)[:, None]
            acc = torch.zeros_like(x)
            acc += x.index_select(1, idx).repeat(1, 2, 1)[:, :3]
            return (f, g, h, torch.tril(k), lv, n, F.pad(x, (1, 2)), (x > 0).any(-1),
                    x.to(torch.int64) // 2, x.split([1, 2], dim=1)[1], acc.rsqrt().neg())

    torch.manual_seed(0)
    idx = torch.tensor([2, 0])
    assert_runs_like_forward(Ops(), (torch.randn(2, 3, 4) + 3, torch.randn(2, 3, 4), idx),
                             dynamic=())


def test_more_operators():
    class More(nn.Module):
        def forward(self, x, y, n, mask):
            m = x.unsqueeze(0)   # (1, 3, 4)
            return (torch.div(x, y, rounding_mode="trunc"), x // 0.7, x % 0.7, n % 3, n // -2,
                    torch.fmod(x, 0.7), (x > 0.5) & ~mask | (y < 0), (x == y) ^ (x != 0),
                    x.clamp(min=y), torch.addmm(y[:, 0], x, y.t()),
                    torch.baddbmm(m.mT @ m, m.mT, m),
                    torch.einsum("ij,kj->ik", x, y), torch.outer(x[0], y[1]),
                    torch.lerp(x, y, 0.3), torch.addcmul(x, x, y, value=2),
                    x.gather(1, n.abs() % 4), x.narrow(1, 1, 2), x.select(1, -1),
                    *x.unbind(1), m.movedim(0, -1), x.amin(1) + x.prod(1) + x.logsumexp(1),
                    x.argmin(1), x.argmax(), (x > -5).all(1), x.round(decimals=1),
                    torch.expm1(x) + torch.log1p(x.abs()) + torch.log2(x.abs() + 1),
                    torch.log10(x.abs() + 1) + torch.exp2(x) + x.trunc() + x.frac(),
                    x.sign() * x.reciprocal(), torch.isnan(x.log()) | torch.isinf(x.exp()),
                    x.float() + n.to(torch.float32), n.long() * 2 + n.t().sum(1))

    torch.manual_seed(0)
    x, y = torch.randn(3, 4) * 2, torch.randn(3, 4) + 3
    n = torch.randint(-9, 9, (3, 4))
    mask = torch.rand(3, 4) > 0.5
    assert_runs_like_forward(More(), (x, y, n, mask), dynamic=())


def test_convolutions_normalizations_and_resizing():
    class Layers(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1d = nn.Conv1d(3, 4, 3, padding="same")
            self.group_norm = nn.GroupNorm(2, 4)
            self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
            self.instance_norm = nn.InstanceNorm2d(2, affine=True)
            self.shuffle = nn.PixelShuffle(2)

        def forward(self, x, img):
            up = self.up(self.group_norm(img))
            return (self.conv1d(x), F.rms_norm(x, (5,)), F.normalize(x, dim=1),
                    self.instance_norm(F.interpolate(up, scale_factor=2, mode="nearest")),
                    F.interpolate(up, size=(10, 12), mode="bilinear"),
                    F.interpolate(up, scale_factor=2, mode="bilinear", align_corners=True),
                    self.shuffle(torch.cat([up, up], 1)))

    torch.manual_seed(0)
    assert_runs_like_forward(Layers().eval(), (torch.randn(2, 3, 5), torch.randn(2, 4, 3, 4)),
                             [(torch.randn(3, 3, 5), torch.randn(3, 4, 3, 4))])


def test_scaled_dot_product_attention_masks():
    class Attend(nn.Module):
        def forward(self, q, k, v, keep):
            return (F.scaled_dot_product_attention(q, k, v, attn_mask=keep),
                    F.scaled_dot_product_attention(q, k, v, is_causal=True))

    torch.manual_seed(0)
    keep = torch.rand(5, 5) > 0.3
    keep[:, 0] = True
    q, k, v = (torch.randn(2, 2, 5, 8) for _ in range(3))
    assert_runs_like_forward(Attend(), (q, k, v, keep), dynamic=())


def test_transformer_encoder_with_padding_mask():
    torch.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True),
                                    2).eval()

    class Encode(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, x, padding):
            return self.encoder(x, src_key_padding_mask=padding)

    padding = torch.tensor([[False] * 5 + [True], [False] * 6])
    assert_runs_like_forward(Encode(), (torch.randn(2, 6, 16), padding), dynamic=())


def test_activations():
    class Activations(nn.Module):
        def __init__(self):
            super().__init__()
            self.prelu = nn.PReLU(3)
            self.layers = nn.ModuleList([
                nn.ReLU(), nn.ReLU6(), nn.Hardtanh(-0.5, 0.7), nn.LeakyReLU(0.1), nn.ELU(0.7),
                nn.CELU(0.6), nn.SELU(), nn.GELU("tanh"), nn.SiLU(), nn.Mish(),
                nn.Softplus(beta=2.0), nn.Hardswish(), nn.Hardsigmoid(), nn.LogSigmoid(),
                nn.Softsign(), nn.Tanhshrink(), nn.Sigmoid(), nn.Tanh(), nn.Softmin(1),
                nn.Threshold(0.1, -2.0), nn.GLU(-1)])

        def forward(self, x):
            return [layer(x) for layer in self.layers] + [self.prelu(x)]

    torch.manual_seed(0)
    with torch.no_grad():
        model = Activations().eval()
        model.prelu.weight.uniform_(0.1, 0.5)
    assert_runs_like_forward(model, (torch.randn(2, 3, 4) * 6,), [(torch.randn(4, 3, 4),)])


def test_sizes_read_in_forward_stay_dynamic():
    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(50, 8)
            self.positions = nn.Parameter(torch.randn(1, 20, 8))
            self.cls = nn.Parameter(torch.randn(1, 1, 8))

        def forward(self, ids):
            b, t = ids.shape
            h = self.tokens(ids) + self.positions[:, :t] + self.tokens(torch.arange(t))
            h = h + h.new_zeros(b, t, 8) + torch.full((b, 1, 1), 0.5)
            h = torch.cat([self.cls.expand(b, -1, -1), h], dim=1)
            last = h[:, t - 1] * t
            return h.view(b * (t + 1), -1).reshape(b, t + 1, 2, 4), last

    torch.manual_seed(0)
    model = Positions().eval()
    proto = assert_runs_like_forward(model, (torch.randint(0, 50, (2, 5)),),
                                     [(torch.randint(0, 50, (3, 9)),)], dynamic=(0, 1))
    assert {"Shape", "Range", "ConstantOfShape"} <= node_types(proto)


@pytest.mark.parametrize("opset", [13, 17, 23])
def test_other_opsets(opset):
    # 13 and 17 decompose GELU (and LayerNorm below 17); 23 is the newest torch accepts
    torch.manual_seed(0)
    model = EmbeddingLayerNorm().eval()
    proto = assert_runs_like_forward(model, (torch.randint(0, 20, (2, 7)),),
                                     [(torch.randint(0, 20, (3, 7)),)], opset_version=opset)
    assert proto.opset_import[0].version == opset
    assert ("LayerNormalization" in node_types(proto)) == (opset >= 17)
    assert ("Gelu" in node_types(proto)) == (opset >= 20)


def test_constant_folding_of_parameter_only_values():
    class Transposed(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(3, 4))

        def forward(self, x):
            return x @ self.weight.t()

    torch.manual_seed(0)
    x = torch.randn(2, 4)
    folded = onnx.load_from_string(export_bytes(Transposed(), (x,)))
    assert [n.op_type for n in folded.graph.node] == ["Constant", "MatMul"]
    assert not folded.graph.initializer
    model = Transposed()
    kept = onnx.load_from_string(export_bytes(model, (x,), do_constant_folding=False))
    assert [n.op_type for n in kept.graph.node] == ["Transpose", "MatMul"]
    assert [i.name for i in kept.graph.initializer] == ["weight"]
    np.testing.assert_allclose(run_onnx(kept.SerializeToString(), (x,))[0],
                               model(x).detach().numpy(), atol=1e-6)


# ---------------------------------------------------------------------------- names and axes
def test_names_match_torchs_exporter():
    real = pytest.importorskip("torch")
    real.manual_seed(0)
    ref_model = real.nn.Sequential(real.nn.Linear(4, 8), real.nn.ReLU(),
                                   real.nn.Linear(8, 3)).eval()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    for kwargs in ({}, {"input_names": ["x"], "output_names": ["y"]}):
        ref_buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            real.onnx.export(ref_model, (real.randn(2, 4),), ref_buf, dynamo=False, **kwargs)
        ref = onnx.load_from_string(ref_buf.getvalue())
        ours = onnx.load_from_string(export_bytes(model, (torch.randn(2, 4),), **kwargs))
        assert [i.name for i in ours.graph.input] == [i.name for i in ref.graph.input]
        assert [i.name for i in ours.graph.initializer] == \
            [i.name for i in ref.graph.initializer]
        assert [n.name for n in ours.graph.node] == [n.name for n in ref.graph.node]
        assert ours.opset_import[0].version == ref.opset_import[0].version
        if kwargs:
            assert [o.name for o in ours.graph.output] == ["y"]
        else:   # unnamed outputs are numbered, as torch's
            assert ours.graph.output[0].name.isdigit()


def test_dynamic_axes_forms_and_checks():
    model = MLP().eval()
    x = torch.randn(2, 4)
    proto = onnx.load_from_string(export_bytes(
        model, (x,), input_names=["x"], output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}))
    assert dims(proto.graph.input[0]) == ["batch", 4]
    assert dims(proto.graph.output[0]) == ["batch", 3]
    with pytest.warns(UserWarning, match="Automatically generated names"):
        proto = onnx.load_from_string(export_bytes(model, (x,), input_names=["x"],
                                                   dynamic_axes={"x": [0, 1]}))
    assert dims(proto.graph.input[0]) == ["x_dynamic_axes_1", "x_dynamic_axes_2"]
    with pytest.warns(UserWarning, match="not a valid input/output name"):
        export_bytes(model, (x,), dynamic_axes={"nope": {0: "b"}})
    with pytest.raises(RuntimeError, match="Dynamic shape axis"):
        export_bytes(model, (x,), input_names=["x"], dynamic_axes={"x": {5: "b"}})


def test_input_and_output_names():
    model = MLP().eval()
    x = torch.randn(2, 4)
    # as torch's exporter, names past the inputs rename the parameters in state_dict order
    proto = onnx.load_from_string(export_bytes(model, (x,), input_names=["x", "w1"]))
    assert [i.name for i in proto.graph.initializer] == ["w1", "fc1.bias", "fc2.weight",
                                                         "fc2.bias"]
    np.testing.assert_allclose(run_onnx(proto.SerializeToString(), (x,))[0],
                               model(x).detach().numpy(), atol=1e-6)
    with pytest.raises(RuntimeError, match=r"number of input names provided \(6\) exceeded"):
        export_bytes(model, (x,), input_names=list("abcdef"))
    with pytest.raises(RuntimeError, match="number of output names provided"):
        export_bytes(model, (x,), output_names=["a", "b"])


def test_repeated_and_passthrough_outputs_get_identity_nodes():
    class Twice(nn.Module):
        def forward(self, x):
            y = x * 2
            return y, y, x

    data = export_bytes(Twice(), (torch.randn(3),), output_names=["a", "b", "c"])
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto)
    a, b, c = run_onnx(data, (torch.ones(3),))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, np.ones(3, np.float32))


def test_tuple_args_keyword_args_and_python_numbers():
    class Scaled(nn.Module):
        def forward(self, x, scale=1.0, bias=None):
            return x * scale + (0 if bias is None else bias)

    x, bias = torch.randn(2, 3), torch.randn(3)
    for args, kwargs in (((x, 3.0, bias), None), ((x, 3.0, {"bias": bias}), None),
                         ((x,), {"scale": 3.0, "bias": bias})):
        data = export_bytes(Scaled(), args, kwargs=kwargs)
        assert len(onnx.load_from_string(data).graph.input) == 2   # 3.0 is a constant
        np.testing.assert_allclose(run_onnx(data, (x, bias))[0], (x * 3 + bias).numpy(),
                                   atol=1e-6)


# ---------------------------------------------------------------------------- saving
def test_path_bytesio_and_file_object_hold_the_same_model(tmp_path):
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(2, 4)
    path = tmp_path / "mlp.onnx"
    torch.onnx.export(model, (x,), str(path), dynamo=False)
    with open(tmp_path / "f.onnx", "wb") as fh:
        torch.onnx.export(model, (x,), fh, dynamo=False)
    assert path.read_bytes() == export_bytes(model, (x,)) == (tmp_path / "f.onnx").read_bytes()


def test_dynamo_true_returns_a_program_and_saves_weights_beside_the_file(tmp_path):
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(2, 4)
    program = torch.onnx.export(model, (x,), dynamic_shapes={"x": {0: "batch"}})
    assert isinstance(program, torch.onnx.ONNXProgram)
    graph = program.model_proto.graph
    assert [i.name for i in graph.input] == ["x"]   # the forward's parameter name
    assert dims(graph.input[0]) == ["batch", 4]
    x5 = torch.randn(5, 4)
    np.testing.assert_allclose(program(x5)[0].numpy(), model(x5).detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(program(x)[0].numpy(), model(x).detach().numpy(), atol=1e-6)
    path = tmp_path / "mlp.onnx"
    assert torch.onnx.export(model, (x,), path) is not None
    assert sorted(os.listdir(tmp_path)) == ["mlp.onnx", "mlp.onnx.data"]
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], model(x).detach().numpy(),
                               atol=1e-6)
    with pytest.warns(DeprecationWarning, match="BytesIO"):
        torch.onnx.export(model, (x,), io.BytesIO())
    assert torch.onnx.export(model, (x,), io.BytesIO(), dynamo=False) is None


def test_export_params_false_and_initializers_as_inputs():
    model, x = MLP().eval(), torch.randn(2, 4)
    bare = onnx.load_from_string(export_bytes(model, (x,), export_params=False))
    assert not bare.graph.initializer
    assert [i.name for i in bare.graph.input][1:] == list(model.state_dict())
    both = onnx.load_from_string(export_bytes(model, (x,), keep_initializers_as_inputs=True))
    assert [i.name for i in both.graph.input][1:] == [i.name for i in both.graph.initializer]


# ---------------------------------------------------------------------------- modes and errors
def test_training_mode_handling():
    model = MLP()
    seen = []

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = model

        def forward(self, x):
            seen.append((self.training, torch.onnx.is_in_onnx_export()))
            return self.mlp(x)

    probe = Probe()
    x = torch.randn(2, 4)
    export_bytes(probe, (x,))
    export_bytes(probe, (x,), training=torch.onnx.TrainingMode.PRESERVE)
    with pytest.warns(UserWarning, match="training mode"):
        torch.onnx.export(probe, (x,))
    assert seen == [(False, True), (True, True), (True, True)]
    assert probe.training and not torch.onnx.is_in_onnx_export()


def test_training_batchnorm_is_unsupported():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    with pytest.raises(UnsupportedOperatorError, match="aten::batch_norm"):
        export_bytes(model, (torch.randn(3, 4),), training=torch.onnx.TrainingMode.TRAINING)


def test_unsupported_operator_is_named():
    with pytest.raises(UnsupportedOperatorError, match=r"'aten::cumprod' to ONNX opset "
                                                       r"version 20 is not supported"):
        export_bytes(CumProd(), (torch.randn(3),))
    assert issubclass(UnsupportedOperatorError, RuntimeError)


def test_writes_that_would_go_unrecorded_are_refused():
    class SetItem(nn.Module):
        def forward(self, x):
            y = x * 2
            y[0] = 0
            return y

    class IntoView(nn.Module):
        def forward(self, x):
            y = x * 2
            y[0].add_(1)
            return y

    class ReluIntoView(nn.Module):
        def forward(self, x):
            y = x * 2
            F.relu(y[:, 0], inplace=True)
            return y

    with pytest.raises(UnsupportedOperatorError, match="aten::index_put_"):
        export_bytes(SetItem(), (torch.randn(3, 2),))
    for model in (IntoView(), ReluIntoView()):
        with pytest.raises(UnsupportedOperatorError, match="in-place write into a view"):
            export_bytes(model, (torch.randn(3, 2),))


def test_untraced_computation_is_refused_not_frozen():
    # A default argument keeps the original function, which the exporter cannot replace.
    class Hidden(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x, act=torch.sigmoid):
            return self.fc(act(x))

    with pytest.raises(OnnxExporterError, match="outside the operations the exporter traces"):
        export_bytes(Hidden(), (torch.randn(2, 3),))


def test_python_values_from_traced_tensors_warn():
    class Branches(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x

    with pytest.warns(torch.onnx.errors.OnnxExporterWarning, match="__bool__"):
        export_bytes(Branches(), (torch.ones(3),))


def test_entry_points_are_restored_after_export_and_after_a_failure():
    from glasstorch.nn.modules.module import Module
    from glasstorch.vision.models import resnet
    saved = (torch.add, torch.Tensor.__add__, torch.Tensor.T, torch.Tensor.shape,
             torch.Tensor.size, F.linear, Module.__call__, resnet.flatten, torch.Tensor.view)
    export_bytes(MLP().eval(), (torch.randn(2, 4),))
    with pytest.raises(UnsupportedOperatorError):
        export_bytes(CumProd(), (torch.randn(2),))
    assert saved == (torch.add, torch.Tensor.__add__, torch.Tensor.T, torch.Tensor.shape,
                     torch.Tensor.size, F.linear, Module.__call__, resnet.flatten,
                     torch.Tensor.view)
    from glasstorch import _tensor
    assert _tensor.alloc_hook[0] is None


def test_argument_errors():
    model, x = MLP().eval(), torch.randn(2, 4)
    with pytest.raises(AttributeError):
        torch.onnx.export(model, (x,), None, dynamo=False)
    with pytest.raises(RuntimeError, match="Unsupported onnx_opset_version: 24"):
        export_bytes(model, (x,), opset_version=24)
    with pytest.raises(OnnxExporterError, match="opset 13 to 23"):   # torch goes down to 7
        export_bytes(model, (x,), opset_version=12)
    with pytest.raises(ValueError, match="dynamic_axes when dynamo=False"):
        export_bytes(model, (x,), dynamic_shapes={"x": {0: "b"}})
    with pytest.raises(TypeError):   # keyword-only after f, as torch's
        torch.onnx.export(model, (x,), io.BytesIO(), ["x"])
    with pytest.raises(NotImplementedError):
        export_bytes(model, (x,), operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN)


def test_verbose_prints_the_graph(capsys):
    export_bytes(MLP().eval(), (torch.randn(2, 4),), verbose=True)
    assert "Gemm" in capsys.readouterr().out


def test_missing_onnx_names_the_package(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="pip install onnx"):
        export_bytes(MLP(), (torch.randn(2, 4),))


def test_recurrent_weights_are_stored_once_not_per_time_step():
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(16, 64, num_layers=2)
            self.head = nn.Linear(64, 5)

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    model = Tagger().eval()
    x = torch.randn(35, 4, 16)
    data = export_bytes(model, (x,))
    weight_bytes = 4 * sum(p.numel() for p in model.parameters())
    assert len(data) < 3 * weight_bytes  # 35 steps x 2 layers of copies would be ~50x
    np.testing.assert_allclose(run_onnx(data, (x,))[0], model(x).detach().numpy(), atol=1e-5)
