"""pyro-ppl: a Bayesian regression fitted by SVI, log densities from traces, and MCMC-free
inference utilities; every random draw comes from torch's generator seeded by pyro."""

import pyro
import pyro.distributions as dist
import torch
from pyro.infer import SVI, Predictive, Trace_ELBO
from pyro.infer.autoguide import AutoDiagonalNormal
from pyro.optim import Adam

from .._support import case, randn


def version():
    """The version of the library under test."""
    return pyro.__version__


def model(x, y=None):
    """y ~ Normal(w x + b, sigma), with priors on w, b and sigma."""
    w = pyro.sample("w", dist.Normal(torch.zeros(3), torch.ones(3)).to_event(1))
    b = pyro.sample("b", dist.Normal(0.0, 2.0))
    sigma = pyro.sample("sigma", dist.HalfNormal(1.0))
    with pyro.plate("data", x.shape[0]):
        return pyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


def _data():
    x = randn(0, 30, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3 + 0.2 * randn(1, 30)
    return x, y


@case
def svi(ctx):
    """Fifty SVI steps of a mean-field guide; ELBO losses and the fitted posterior."""
    pyro.clear_param_store()
    pyro.set_rng_seed(0)
    x, y = _data()
    guide = AutoDiagonalNormal(model)
    svi = SVI(model, guide, Adam({"lr": 0.05}), loss=Trace_ELBO())
    losses = torch.tensor([svi.step(x, y) for _ in range(50)], dtype=torch.float64)
    median = guide.median(x)
    pyro.set_rng_seed(1)
    samples = Predictive(model, guide=guide, num_samples=20)(x)
    return {"losses": losses, "w": median["w"], "b": median["b"], "sigma": median["sigma"],
            "obs_mean": samples["obs"].mean(0)}


@case
def densities(ctx):
    """Trace log-probabilities under conditioned values; a few pyro distributions."""
    x, y = _data()
    conditioned = pyro.condition(model, data={"w": torch.tensor([0.5, -1.0, 0.0]),
                                              "b": torch.tensor(0.1),
                                              "sigma": torch.tensor(0.7)})
    trace = pyro.poutine.trace(conditioned).get_trace(x, y)
    trace.compute_log_prob()
    out = {f"log_prob.{n}": site["log_prob_sum"] for n, site in trace.nodes.items()
           if site["type"] == "sample"}
    v = torch.linspace(0.1, 0.9, 5)
    out["beta"] = dist.Beta(2.0, 3.0).log_prob(v)
    out["zinb"] = dist.ZeroInflatedNegativeBinomial(
        total_count=torch.tensor(3.0), probs=torch.tensor(0.4),
        gate=torch.tensor(0.2)).log_prob(torch.arange(5.0))
    out["mvn"] = dist.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor(
        [[1.0, 0.0], [0.5, 0.8]])).log_prob(torch.tensor([[0.3, -0.2], [1.0, 1.0]]))
    out["vonmises"] = dist.VonMises(0.5, 2.0).log_prob(v)
    return out
