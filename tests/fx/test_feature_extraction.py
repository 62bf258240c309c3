"""torchvision.models.feature_extraction on glasstorch's fx: node names as torchvision gives
them, and extractors whose outputs are the values eager code computes at those points."""

import warnings

import numpy as np
import pytest

import glasstorch
from glasstorch import nn
from glasstorch.vision.models import resnet18
from glasstorch.vision.models.feature_extraction import (
    create_feature_extractor,
    get_graph_node_names,
)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.drop = nn.Dropout(0.5)
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.act(self.conv(x))
        x = x + 1
        x = self.act(x) * 2
        if self.training:
            x = self.drop(x)
        return x.mean()


def test_node_names_resnet18():
    train, evaluation = get_graph_node_names(resnet18())
    assert train == evaluation
    assert train[:5] == ["x", "conv1", "bn1", "relu", "maxpool"]
    # a BasicBlock: its relu module called twice, the residual add named in the block
    block = [n for n in train if n.startswith("layer1.0.")]
    assert block == ["layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu", "layer1.0.conv2",
                     "layer1.0.bn2", "layer1.0.add", "layer1.0.relu_1"]
    assert train[-3:] == ["avgpool", "flatten", "fc"]


def test_train_eval_differences_warn():
    with pytest.warns(UserWarning, match="eval mode are a subsequence"):
        train, evaluation = get_graph_node_names(Small())
    assert train == ["x", "conv", "act", "add", "act_1", "mul", "drop", "mean"]
    assert evaluation == ["x", "conv", "act", "add", "act_1", "mul", "mean"]


def test_extractor_outputs_match_eager():
    glasstorch.manual_seed(0)
    m = resnet18().eval()
    x = glasstorch.randn(1, 3, 32, 32)
    fe = create_feature_extractor(m, {"layer1": "l1", "layer2.1.relu_1": "l2", "avgpool": "p"})
    assert type(fe).__name__ == "ResNet" and not fe.training
    out = fe(x)
    assert list(out) == ["l1", "l2", "p"]
    seen = {}
    hooks = [m.layer1.register_forward_hook(lambda mod, i, o: seen.__setitem__("l1", o)),
             m.layer2[1].register_forward_hook(lambda mod, i, o: seen.__setitem__("l2", o)),
             m.avgpool.register_forward_hook(lambda mod, i, o: seen.__setitem__("p", o))]
    m(x)
    for h in hooks:
        h.remove()
    for k in out:
        np.testing.assert_allclose(out[k].detach().numpy(), seen[k].detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
    # nothing after the last requested node is computed
    assert "fc" not in fe.code


def test_extractor_switches_graphs_with_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fe = create_feature_extractor(Small(), train_return_nodes=["drop"],
                                      eval_return_nodes=["mul"])
    assert fe.training and "drop" in fe.code
    fe.eval()
    assert "drop" not in fe.code and "mul" in fe.code


def test_extractor_errors():
    with pytest.raises(ValueError, match="Either `return_nodes`"):
        create_feature_extractor(Small())
    with pytest.raises(ValueError, match="node: 'nope' is not present in model"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            create_feature_extractor(Small(), ["nope"])
