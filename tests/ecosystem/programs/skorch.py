"""skorch: a scikit-learn estimator wrapping a torch module: fit, predict, score, save."""

import numpy as np
import skorch
import torch
from skorch import NeuralNetClassifier, NeuralNetRegressor

from .._support import case


def version():
    """The version of the library under test."""
    return skorch.__version__


class MLP(torch.nn.Module):
    """A two-layer classifier (softmax output, as NeuralNetClassifier's default loss expects)."""

    def __init__(self, n_out=3, softmax=True):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(),
                                       torch.nn.Linear(16, n_out))
        self.softmax = softmax

    def forward(self, X):
        out = self.net(X)
        return torch.softmax(out, dim=-1) if self.softmax else out


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1).astype(np.int64)
    return X, y


@case
def classifier(ctx):
    """fit (no shuffling, no validation split) for 5 epochs, predict_proba, history."""
    X, y = _data()
    net = NeuralNetClassifier(MLP, max_epochs=5, lr=0.1, batch_size=16, train_split=None,
                              iterator_train__shuffle=False, verbose=0)
    net.initialize()
    ctx.weights(net.module_, "mlp")
    net.partial_fit(X, y)
    folder = ctx.tmpdir("classifier")
    net.save_params(f_params=f"{folder}/params.pt")
    other = NeuralNetClassifier(MLP, train_split=None, verbose=0).initialize()
    other.load_params(f_params=f"{folder}/params.pt")
    return {"proba": net.predict_proba(X), "pred": net.predict(X),
            "train_loss": np.array(net.history[:, "train_loss"]),
            "score": np.float64(net.score(X, y)), "reloaded": other.predict_proba(X)}


@case
def regressor(ctx):
    """NeuralNetRegressor with Adam and a validation split that does not shuffle."""
    X, y = _data()
    target = (X[:, :1] * 2 - X[:, 1:2]).astype(np.float32)
    net = NeuralNetRegressor(MLP, module__n_out=1, module__softmax=False, max_epochs=4,
                             lr=0.01, optimizer=torch.optim.Adam, batch_size=20,
                             train_split=skorch.dataset.ValidSplit(4, stratified=False),
                             iterator_train__shuffle=False, verbose=0)
    net.initialize()
    ctx.weights(net.module_, "reg")
    net.partial_fit(X, target)
    return {"pred": net.predict(X), "valid_loss": np.array(net.history[:, "valid_loss"])}
