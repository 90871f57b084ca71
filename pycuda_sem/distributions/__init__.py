"""pycuda_sem.distributions: torch.distributions, composed from tensor ops
(so log_prob and rsample are differentiable through autograd), on the CPU
and CUDA alike: the distribution classes, constraints, transforms and
TransformedDistribution, kl_divergence/register_kl, and utils.

Samplers draw through rand/randn (manual_seed makes them reproducible);
the gamma/Poisson/binomial ones are exact whole-tensor samplers in
pycuda_sem/_sampling_more.py. Names of torch.distributions not implemented
here raise NotImplementedError.
"""
from . import constraints, transforms, utils
from .distribution import Distribution
from .normal import Normal
from .uniform import Uniform
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .independent import Independent
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,  # noqa: F401
                         IndependentTransform, PowerTransform, SigmoidTransform, SoftmaxTransform,
                         TanhTransform, Transform)
from .cauchy_base import Cauchy
from .continuous import Exponential, Gumbel, HalfCauchy, HalfNormal, Laplace, LogNormal
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .discrete import Binomial, Geometric, Multinomial, Poisson
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, MixtureSameFamily,  # noqa: F401
                      RelaxedBernoulli, RelaxedOneHotCategorical)
from .continuous_bernoulli import ContinuousBernoulli
from .kl import kl_divergence, register_kl
from . import kl_more as _kl_more  # noqa: F401 - registers the pairs of the classes above
from . import kl  # noqa: F401

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy",
           "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "Dirichlet", "Distribution", "ExpTransform", "Exponential",
           "ExpRelaxedCategorical", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "IndependentTransform", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
           "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "Normal", "OneHotCategorical", "Poisson", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints",
           "kl_divergence", "register_kl", "transforms", "utils"]


def __getattr__(name):
    if name in ("VonMises", "Weibull", "Pareto", "Kumaraswamy", "FisherSnedecor", "NegativeBinomial",
                "LKJCholesky", "Wishart", "InverseGamma", "GeneralizedPareto",
                "LogisticNormal", "ExponentialFamily", "CumulativeDistributionTransform",
                "CorrCholeskyTransform", "StickBreakingTransform", "LowerCholeskyTransform",
                "PositiveDefiniteTransform", "ReshapeTransform", "CatTransform", "StackTransform",
                "SoftplusTransform", "biject_to", "transform_to"):
        raise NotImplementedError("torch.distributions.%s is not implemented in pycuda_sem (see "
                                  "docs/api_training.md for the distributions that are)" % name)
    raise AttributeError("module 'pycuda_sem.distributions' has no attribute %r" % name)
