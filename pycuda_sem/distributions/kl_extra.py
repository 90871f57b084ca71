"""kl_divergence pairs of the families added with ExponentialFamily and
Pareto (torch's table): any two members of one exponential family by the
Bregman divergence of the log normaliser (Wishart and ContinuousBernoulli
have no closed-form pair, so they get theirs this way), Pareto with Pareto,
and Pareto against / from the other univariate families (infinite where the
support of p is not inside that of q)."""
import math

from .. import _C
from .continuous import Exponential, Gumbel, Laplace
from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily, _inner, _log_normalizer_and_grads
from .gamma import Beta, Gamma
from .kl import register_kl
from .normal import Normal
from .transformed_more import Pareto
from .uniform import Uniform


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "be computed using Bregman divergences")
    leaves, value_p, grads = _log_normalizer_and_grads(p, p._natural_params)
    result = q._log_normalizer(*q._natural_params) - value_p
    for theta_p, theta_q, g in zip(leaves, q._natural_params, grads):
        result = result - _inner(p, theta_p, theta_q - theta_p, g)
    return result


def _inf_like(t):
    return _C.full_like(t, math.inf)


def _x_log_x(t):
    return t.xlogy(t)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return result.masked_fill(p.scale < q.scale, math.inf)


# a p with mass below q's lower bound q.scale: infinite everywhere (torch's table)
@register_kl(Beta, Pareto)
def _kl_beta_pareto(p, q):
    return _inf_like(p.concentration1)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_pareto(p, q):
    return _inf_like(p.probs)


@register_kl(Exponential, Pareto)
def _kl_exponential_pareto(p, q):
    return _inf_like(p.rate)


@register_kl(Gamma, Pareto)
def _kl_gamma_pareto(p, q):
    return _inf_like(p.concentration)


@register_kl(Gumbel, Pareto)
@register_kl(Laplace, Pareto)
@register_kl(Normal, Pareto)
def _kl_real_line_pareto(p, q):
    return _inf_like(p.loc)


# Pareto's unbounded support is never inside a bounded one
@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_bounded(p, q):
    return _inf_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    sr = p.scale * q.rate
    a = p.alpha
    result = (a / sr).log() - a.reciprocal() + a * sr / (a - 1) - 1
    return result.masked_fill(a <= 1, math.inf)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    a = p.alpha
    mean_log = p.scale.log() + a.reciprocal()  # E[log X] under p
    t1 = a.log() - mean_log
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * mean_log
    t4 = q.rate * a * p.scale / (a - 1)
    return (t1 + t2 + t3 + t4 - 1).masked_fill(a <= 1, math.inf)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    a = p.alpha
    two_var = 2 * q.scale.pow(2)
    m = p.scale / (a - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * a / p.scale).log()
    t2 = a.reciprocal()
    t3 = a * m.pow(2) / (a - 2)  # the variance of p
    t4 = (a * m - q.loc).pow(2)  # (mean of p - loc)^2
    return (t1 - t2 + (t3 + t4) / two_var - 1).masked_fill(a <= 2, math.inf)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width  # E[log X] under p
    return (t2 * (q.alpha + 1) - t1).masked_fill(p.low < q.scale, math.inf)
