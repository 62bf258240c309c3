"""gpytorch: an exact GP regression model trained by marginal likelihood, then predicting."""

import gpytorch
import torch

from .._support import case


def version():
    """The version of the library under test."""
    return gpytorch.__version__


class ExactGP(gpytorch.models.ExactGP):
    """Constant mean, scaled RBF kernel."""

    def __init__(self, x, y, likelihood, kernel):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(kernel)

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                         self.covar_module(x))


def _data():
    x = torch.linspace(0, 1, 25, dtype=torch.float64)
    y = torch.sin(6 * x) + 0.1 * torch.cos(17 * x)
    return x, y


def _fit(kernel, steps=15):
    x, y = _data()
    likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
    model = ExactGP(x, y, likelihood, kernel).double()
    model.train()
    likelihood.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = -mll(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    model.eval()
    likelihood.eval()
    test = torch.linspace(-0.1, 1.1, 9, dtype=torch.float64)
    with torch.no_grad(), gpytorch.settings.fast_pred_var(False):
        pred = likelihood(model(test))
    return model, {"losses": torch.stack(losses), "mean": pred.mean, "variance": pred.variance,
                   "noise": likelihood.noise.detach()}


@case
def rbf(ctx):
    """RBF kernel: hyperparameters after training, predictive mean and variance."""
    model, out = _fit(gpytorch.kernels.RBFKernel())
    out["lengthscale"] = model.covar_module.base_kernel.lengthscale.detach()
    out["outputscale"] = model.covar_module.outputscale.detach()
    return out


@case
def matern(ctx):
    """Matern-5/2 and periodic kernels, summed."""
    kernel = gpytorch.kernels.MaternKernel(nu=2.5) + gpytorch.kernels.PeriodicKernel()
    return _fit(kernel, steps=10)[1]
