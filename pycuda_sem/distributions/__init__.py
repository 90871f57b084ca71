"""pycuda_sem.distributions: the probability distributions of torch.distributions
that models use most (Normal, Uniform, Bernoulli, Categorical, OneHotCategorical,
Independent) with sample/rsample, log_prob, entropy, moments, cdf where torch
has it, and kl_divergence between them.

Everything is composed from tensor ops, so log_prob and rsample are
differentiable through autograd (the reparameterised draws of Normal and
Uniform), on the CPU and CUDA alike. Distributions whose densities need the
gamma function (Beta, Gamma, Dirichlet, ...) have no kernel here yet: naming
one raises NotImplementedError.
"""
from .distribution import Distribution
from .normal import Normal
from .uniform import Uniform
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .independent import Independent
from .kl import kl_divergence, register_kl

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical",
           "Independent", "kl_divergence", "register_kl"]


def __getattr__(name):
    if name in ("Beta", "Gamma", "Dirichlet", "Chi2", "StudentT", "Poisson", "Binomial",
                "Multinomial", "MultivariateNormal", "LowRankMultivariateNormal", "Exponential",
                "Laplace", "LogNormal", "Cauchy", "Gumbel", "HalfNormal", "Geometric",
                "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution",
                "MixtureSameFamily", "VonMises", "Weibull", "Pareto", "Kumaraswamy", "FisherSnedecor",
                "NegativeBinomial", "ContinuousBernoulli", "LKJCholesky", "Wishart"):
        raise NotImplementedError("torch.distributions.%s is not implemented in pycuda_sem (Normal, "
                                  "Uniform, Bernoulli, Categorical, OneHotCategorical and Independent "
                                  "are)" % name)
    raise AttributeError("module 'pycuda_sem.distributions' has no attribute %r" % name)
