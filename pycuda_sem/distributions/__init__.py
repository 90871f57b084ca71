"""pycuda_sem.distributions: torch.distributions, composed from tensor ops
(so log_prob and rsample are differentiable through autograd), on the CPU
and CUDA alike: the distribution classes, constraints, transforms and
TransformedDistribution, kl_divergence/register_kl, and utils.

Samplers draw through rand/randn (manual_seed makes them reproducible);
the gamma/Poisson/binomial ones are exact whole-tensor samplers in
pycuda_sem/_sampling_more.py. biject_to/transform_to (constraint_registry.py)
map constraints to transforms.
"""
from . import constraints, transforms, utils
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .normal import Normal
from .uniform import Uniform
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .independent import Independent
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,  # noqa: F401
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
                         PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform, Transform,
                         identity_transform)
from . import constraint_registry
from .constraint_registry import biject_to, transform_to
from .cauchy_base import Cauchy
from .continuous import Exponential, Gumbel, HalfCauchy, HalfNormal, Laplace, LogNormal
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .discrete import Binomial, Geometric, Multinomial, Poisson
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, MixtureSameFamily,  # noqa: F401
                      RelaxedBernoulli, RelaxedOneHotCategorical)
from .continuous_bernoulli import ContinuousBernoulli
from .von_mises import VonMises
from .transformed_more import InverseGamma, Kumaraswamy, LogisticNormal, Pareto, Weibull
from .continuous_more import FisherSnedecor, GeneralizedPareto
from .negative_binomial import NegativeBinomial
from .lkj_cholesky import LKJCholesky
from .wishart import Wishart
from .kl import kl_divergence, register_kl
from . import kl_more as _kl_more  # noqa: F401 - registers the pairs of the classes above
from . import kl_extra as _kl_extra  # noqa: F401 - the exponential-family and Pareto pairs
from . import kl  # noqa: F401

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential",
           "ExponentialFamily", "ExpRelaxedCategorical", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform",
           "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "LowerCholeskyTransform",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution",
           "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraint_registry", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transform_to", "transforms", "utils"]


# torch keeps (nearly) one distribution a module: torch.distributions.beta.Beta,
# .studentT.StudentT ... Here several share a file, so each of torch's module
# paths that no file here has is a small module naming its classes, for
# scripts that import them by path (`from torch.distributions.beta import Beta`).
_TORCH_PATHS = {
    "beta": ("Beta",), "binomial": ("Binomial",), "cauchy": ("Cauchy",), "chi2": ("Chi2",),
    "dirichlet": ("Dirichlet",), "exponential": ("Exponential",), "fishersnedecor": ("FisherSnedecor",),
    "generalized_pareto": ("GeneralizedPareto",), "geometric": ("Geometric",), "gumbel": ("Gumbel",),
    "half_cauchy": ("HalfCauchy",), "half_normal": ("HalfNormal",), "inverse_gamma": ("InverseGamma",),
    "kumaraswamy": ("Kumaraswamy",), "laplace": ("Laplace",), "log_normal": ("LogNormal",),
    "logistic_normal": ("LogisticNormal",), "lowrank_multivariate_normal": ("LowRankMultivariateNormal",),
    "mixture_same_family": ("MixtureSameFamily",), "multinomial": ("Multinomial",),
    "one_hot_categorical": ("OneHotCategorical", "OneHotCategoricalStraightThrough"), "pareto": ("Pareto",),
    "poisson": ("Poisson",), "relaxed_bernoulli": ("LogitRelaxedBernoulli", "RelaxedBernoulli"),
    "relaxed_categorical": ("ExpRelaxedCategorical", "RelaxedOneHotCategorical"), "studentT": ("StudentT",),
    "weibull": ("Weibull",), "gamma": ("Gamma",),
}


def _path_modules():
    import sys
    import types
    for name, classes in _TORCH_PATHS.items():
        full = __name__ + "." + name
        mod = sys.modules.get(full)
        if mod is None:
            mod = types.ModuleType(full, "torch.distributions.%s: %s." % (name, ", ".join(classes)))
            mod.__all__ = list(classes)
            sys.modules[full] = mod
            globals()[name] = mod
        for c in classes:
            setattr(mod, c, globals()[c])


_path_modules()
