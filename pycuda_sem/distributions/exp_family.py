"""ExponentialFamily: the base of the distributions whose density is
exp(<t(x), theta> - F(theta) + k(x)) (natural parameters theta, sufficient
statistic t, log normaliser F, carrier measure k).

A subclass gives _natural_params (a tuple of tensors), _log_normalizer(*theta)
and _mean_carrier_measure (E[k(X)]); the base then has the entropy
H = F(theta) - <theta, grad F(theta)> - E[k(X)], with grad F taken by autograd
(the Bregman-divergence form of Nielsen and Nock), and kl_extra.py registers
KL(p || q) = F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>
for two members of one family."""
from ..autograd.grad_mode import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


def _log_normalizer_and_grads(dist, nparams):
    """F(theta) at leaf copies of theta, and dF/dtheta (kept in the graph, so
    the result can be differentiated again)."""
    from ..autograd import grad as _autograd_grad
    leaves = [p.detach().requires_grad_() for p in nparams]
    with enable_grad():
        value = dist._log_normalizer(*leaves)
        grads = _autograd_grad(value.sum(), leaves, create_graph=True)
    return leaves, value, grads


def _inner(dist, theta, a, g):
    """<a, g> per batch entry: a * g summed over the rightmost dims that the
    natural parameter theta (of dist) has beyond dist's batch dims (its own
    event dims: none for Normal's, one for Dirichlet's, two for Wishart's
    matrix). a * g may have broadcast to more batch dims than dist has."""
    extra = theta.dim() - len(dist.batch_shape)
    prod = a * g
    if extra <= 0:
        return prod
    return prod.reshape(tuple(prod.shape[:prod.dim() - extra]) + (-1,)).sum(-1)


class ExponentialFamily(Distribution):
    """Abstract: subclasses define _natural_params, _log_normalizer and
    _mean_carrier_measure; entropy follows from them."""

    @property
    def _natural_params(self):
        raise NotImplementedError("%s does not define _natural_params" % type(self).__name__)

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError("%s does not define _log_normalizer" % type(self).__name__)

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError("%s does not define _mean_carrier_measure" % type(self).__name__)

    def entropy(self):
        result = -self._mean_carrier_measure
        leaves, value, grads = _log_normalizer_and_grads(self, self._natural_params)
        result = result + value
        for theta, g in zip(leaves, grads):
            result = result - _inner(self, theta, theta, g)
        return result
