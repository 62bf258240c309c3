"""glasstorch.utils.summary: layer table, parameter totals, MACs, memory estimates."""

import pytest

import glasstorch as torch
from glasstorch import nn
from glasstorch.utils.summary import summary


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, groups=2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 11 * 11, 10))

    def forward(self, x):
        return self.head(self.features(x))


def test_small_cnn_totals_shapes_macs(capsys):
    torch.manual_seed(0)
    m = SmallCNN()
    m.features[0].weight.requires_grad_(False)
    r = summary(m, input_size=(2, 1, 28, 28),
                col_names=("input_size", "output_size", "num_params", "mult_adds", "trainable"))
    printed = capsys.readouterr().out
    assert printed.strip() == str(r).strip()
    assert r.total_params == sum(p.numel() for p in m.parameters()) == 20058
    assert r.trainable_params == sum(p.numel() for p in m.parameters() if p.requires_grad)
    assert r.non_trainable_params == 72
    # conv1: out elements * in_ch * k*k; conv2 (groups=2): out * 4 * 9; linear: out * in
    macs = 2 * 8 * 26 * 26 * 9 + 2 * 16 * 11 * 11 * 4 * 9 + 2 * 10 * 1936
    assert r.total_mult_adds == macs
    rows = {layer.name: layer for layer in r.summary_list}
    assert rows[""].output_size == [2, 10]
    assert rows["features.0"].output_size == [2, 8, 26, 26]
    assert rows["features.3"].output_size == [2, 8, 13, 13]
    assert rows["features.4"].output_size == [2, 16, 11, 11]
    assert rows["head.0"].output_size == [2, 1936]
    assert rows["head.1"].input_size == [2, 1936]
    assert rows["features.0"].mult_adds == 2 * 8 * 26 * 26 * 9
    assert rows["features"].total_params == 80 + 16 + 592
    assert "Conv2d: 2-1" in printed and "Partial" in printed and "20,058" in printed
    assert "Total mult-adds (k): 275.46" in printed
    # memory: params in float32; activations = leaf outputs, twice (value and gradient)
    assert r.params_bytes == 20058 * 4
    assert r.input_bytes == 2 * 28 * 28 * 4
    leaf_out = 2 * (3 * 8 * 26 * 26 + 8 * 13 * 13 + 16 * 11 * 11 + 1936 + 10) * 4
    assert r.forward_backward_bytes == 2 * leaf_out
    assert 0 < r.saved_for_backward_bytes <= leaf_out
    assert r.total_bytes == r.input_bytes + r.forward_backward_bytes + r.params_bytes


def test_hooks_removed_and_state_restored():
    m = SmallCNN()
    bn = m.features[1]
    before = bn.running_mean.clone(), bn.num_batches_tracked.clone()
    x = torch.randn(4, 1, 28, 28)
    rng = torch.get_rng_state()
    summary(m, input_data=x, verbose=0)
    assert torch.equal(bn.running_mean, before[0])
    assert torch.equal(bn.num_batches_tracked, before[1])
    assert torch.equal(torch.get_rng_state(), rng)
    assert all(not mod._forward_hooks for mod in m.modules())
    assert m.training
    drop = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    rng = torch.get_rng_state()
    summary(drop, input_size=(2, 3), verbose=0)
    assert torch.equal(torch.get_rng_state(), rng)


def test_depth_limits_rows_not_totals():
    m = SmallCNN()
    r = summary(m, input_size=(1, 1, 28, 28), depth=1, verbose=0)
    text = str(r)
    assert "Conv2d" not in text and "Sequential: 1-1" in text
    assert "688" in text  # features' parameters shown on its row when children are hidden
    assert r.total_params == 20058


def test_rnn_and_attention_macs():
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, batch_first=True)
    r = summary(lstm, input_size=(3, 7, 10), verbose=0)
    per_step = 2 * 4 * 20 * (10 + 20) + 2 * 4 * 20 * (40 + 20)
    assert r.total_mult_adds == 3 * 7 * per_step
    assert r.summary_list[0].output_size[0] == [3, 7, 40]
    gru = nn.GRUCell(5, 6)
    assert summary(gru, input_size=(4, 5), verbose=0).total_mult_adds == 4 * 3 * 6 * 11
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 5, 16)
    r = summary(mha, input_data=[x, x, x], verbose=0)
    assert r.total_mult_adds == 2 * (4 * 5 * 16 * 16 + 2 * 5 * 5 * 16)
    assert r.total_params == sum(p.numel() for p in mha.parameters())


def test_shared_modules_and_params_counted_once():
    lin = nn.Linear(4, 4)
    m = nn.Sequential(lin, nn.ReLU(), lin)
    r = summary(m, input_size=(3, 4), verbose=0, col_names=("output_size", "mult_adds"))
    assert r.total_params == 20
    assert r.total_mult_adds == 2 * 3 * 4 * 4  # called twice
    assert summary(m, verbose=0).total_params == 20  # no inputs: parameters only


def test_dtypes_and_kwargs_inputs():
    emb = nn.Embedding(10, 3)
    r = summary(emb, input_size=(2, 5), dtypes=[torch.long], verbose=0)
    assert r.summary_list[0].output_size == [2, 5, 3]
    assert r.input_bytes == 2 * 5 * 8


def test_argument_errors():
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="unknown column"):
        summary(m, input_size=(1, 2), col_names=("bogus",), verbose=0)
    with pytest.raises(ValueError):
        summary(m, input_size=(1, 2), input_data=torch.ones(1, 2), verbose=0)
    with pytest.raises(ValueError):
        summary(m, input_size="12", verbose=0)
    with pytest.raises(TypeError):
        summary(m, input_data=3, verbose=0)
