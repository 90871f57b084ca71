"""kl_divergence(p, q) for the pairs with a closed form, and register_kl
for adding more."""
import math

from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .independent import Independent
from .normal import Normal
from .uniform import Uniform

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for these two types."""
    from .distribution import Distribution
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError("Expected type_p to be a Distribution subclass but got {}".format(type_p))
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError("Expected type_q to be a Distribution subclass but got {}".format(type_q))

    def deco(fn):
        _KL[(type_p, type_q)] = fn
        return fn
    return deco


def kl_divergence(p, q):
    """KL(p || q), batched over the distributions' batch shape; the most
    specific registered pair (by the types' method resolution orders) wins."""
    mro_p, mro_q = type(p).__mro__, type(q).__mro__
    best = None
    for (tp, tq), fn in _KL.items():
        if tp in mro_p and tq in mro_q:
            key = (mro_p.index(tp), mro_q.index(tq))
            if best is None or key < best[0]:
                best = (key, fn)
    if best is not None:
        return best[1](p, q)
    raise NotImplementedError("No KL(p || q) is implemented for p type %s and q type %s"
                              % (type(p).__name__, type(q).__name__))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ..nn import functional as F
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0.0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    r = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return r.masked_fill(outside, math.inf)


@register_kl(Independent, Independent)
def _kl_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different event dims")
    r = kl_divergence(p.base_dist, q.base_dist)
    n = p.reinterpreted_batch_ndims
    return r.sum(tuple(range(-n, 0))) if n else r
