"""float64 reference formulas (NumPy + math, no scipy) for the distributions
of tests/test_distributions_extra*.py: log densities, moments, entropies and
cdfs written out by hand from the textbook definitions, the modified Bessel
functions I0, I1 by their power series, and the LKJ and Wishart normalisers."""
import math

import numpy as np

from dist_refs import EULER, digamma, gammainc, lgamma


def bessel_i(order, x):
    """I_order(x) (order 0, 1, 2) by the power series sum (x/2)^(2k+n) / (k! (k+n)!)."""
    x = np.asarray(x, dtype=np.float64)
    half = x / 2
    term = half ** order / math.factorial(order)
    total = term.copy()
    for k in range(1, 200):
        term = term * half * half / (k * (k + order))
        total = total + term
    return total


def mvlgamma(a, p):
    return sum(lgamma(a - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def mvdigamma(a, p):
    return sum(digamma(a - i / 2) for i in range(p))


def univariate(name, p, x):
    """{'log_prob', 'mean', 'variance', 'entropy', 'cdf', 'mode'} (those defined) at x."""
    x = np.asarray(x, dtype=np.float64)
    if name == "VonMises":
        m, k = p["loc"], p["concentration"]
        return dict(log_prob=k * np.cos(x - m) - np.log(2 * np.pi * bessel_i(0, k)), mean=m, mode=m,
                    variance=1 - bessel_i(1, k) / bessel_i(0, k))
    if name == "Weibull":
        lam, k = p["scale"], p["concentration"]
        g1, g2 = np.exp(lgamma(1 + 1 / k)), np.exp(lgamma(1 + 2 / k))
        with np.errstate(invalid="ignore"):  # the mode is NaN for k < 1 (as torch has it)
            mode = lam * ((k - 1) / k) ** (1 / k)
        return dict(log_prob=np.log(k / lam) + (k - 1) * np.log(x / lam) - (x / lam) ** k, mean=lam * g1,
                    variance=lam ** 2 * (g2 - g1 ** 2), entropy=EULER * (1 - 1 / k) + np.log(lam / k) + 1,
                    cdf=1 - np.exp(-(x / lam) ** k), mode=mode)
    if name == "Pareto":
        s, a = p["scale"], p["alpha"]
        return dict(log_prob=np.log(a) + a * np.log(s) - (a + 1) * np.log(x), mean=a * s / (a - 1),
                    variance=s * s * a / ((a - 1) ** 2 * (a - 2)), entropy=np.log(s / a) + 1 + 1 / a,
                    cdf=1 - (s / x) ** a, mode=s)
    if name == "Kumaraswamy":
        a, b = p["concentration1"], p["concentration0"]

        def moment(n):
            return b * np.exp(lgamma(1 + n / a) + lgamma(b) - lgamma(1 + n / a + b))
        harmonic = digamma(b + 1) + EULER
        return dict(log_prob=np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x ** a), mean=moment(1),
                    variance=moment(2) - moment(1) ** 2,
                    entropy=(1 - 1 / b) + (1 - 1 / a) * harmonic - np.log(a * b),
                    cdf=1 - (1 - x ** a) ** b,
                    mode=np.where((a < 1) | (b < 1), np.nan, ((a - 1) / (a * b - 1)) ** (1 / a)))
    if name == "InverseGamma":
        a, r = p["concentration"], p["rate"]
        return dict(log_prob=a * np.log(r) - lgamma(a) - (a + 1) * np.log(x) - r / x, mean=r / (a - 1),
                    variance=r * r / ((a - 1) ** 2 * (a - 2)),
                    entropy=a + np.log(r) + lgamma(a) - (1 + a) * digamma(a),
                    cdf=1 - gammainc(a, r / x), mode=r / (a + 1))
    if name == "FisherSnedecor":
        d1, d2 = p["df1"], p["df2"]
        lp = (lgamma((d1 + d2) / 2) - lgamma(d1 / 2) - lgamma(d2 / 2) + d1 / 2 * np.log(d1 / d2)
              + (d1 / 2 - 1) * np.log(x) - (d1 + d2) / 2 * np.log1p(d1 * x / d2))
        return dict(log_prob=lp, mean=d2 / (d2 - 2), mode=(d1 - 2) / d1 * d2 / (d2 + 2),
                    variance=2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4)))
    if name == "GeneralizedPareto":
        m, s, c = p["loc"], p["scale"], p["concentration"]
        z = (x - m) / s
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = np.where(c == 0, -np.log(s) - z, -np.log(s) - (1 / c + 1) * np.log1p(c * z))
            sf = np.where(c == 0, np.exp(-z), (1 + c * z) ** (-1 / c))
        return dict(log_prob=lp, cdf=1 - sf, mean=m + s / (1 - c), variance=s * s / ((1 - c) ** 2 * (1 - 2 * c)),
                    entropy=np.log(s) + c + 1, mode=m)
    if name == "NegativeBinomial":
        n, q = p["total_count"], p["probs"]
        lp = lgamma(n + x) - lgamma(n) - lgamma(x + 1) + x * np.log(q) + n * np.log1p(-q)
        return dict(log_prob=lp, mean=n * q / (1 - q), variance=n * q / (1 - q) ** 2,
                    mode=np.maximum(np.floor((n - 1) * q / (1 - q)), 0))
    raise KeyError(name)


def lkj_log_normalizer(d, eta):
    """log c_d(eta), the integral of det(R)^(eta - 1) over d x d correlation
    matrices (Lewandowski, Kurowicka and Joe 2009, eq. 16)."""
    def lbeta(a, b):
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    s = sum((2 * eta - 2 + d - k) * (d - k) for k in range(1, d)) * math.log(2)
    return s + sum((d - k) * lbeta(eta + (d - k - 1) / 2, eta + (d - k - 1) / 2) for k in range(1, d))


def lkj_cholesky_log_prob(L, eta):
    """log density of a Cholesky factor L (w.r.t. its strict lower triangle):
    det(R)^(eta - 1) / c_d times the Jacobian prod_i L_ii^(d - i) of L -> R."""
    d = L.shape[-1]
    diag = np.diagonal(L, axis1=-2, axis2=-1)
    i = np.arange(1, d + 1)
    return (np.log(diag) * (2 * (eta - 1) + d - i)).sum(-1) - lkj_log_normalizer(d, eta)


def wishart(df, cov, X=None):
    """{'log_prob' (at X), 'entropy', 'mean', 'variance'} of Wishart(df, cov) (no batch)."""
    p = cov.shape[-1]
    _, logdet_s = np.linalg.slogdet(cov)
    r = dict(mean=df * cov, variance=df * (cov ** 2 + np.outer(np.diag(cov), np.diag(cov))),
             entropy=((p + 1) / 2 * logdet_s + p * (p + 1) / 2 * math.log(2) + mvlgamma(df / 2, p)
                      - (df - p - 1) / 2 * mvdigamma(df / 2, p) + df * p / 2))
    if X is not None:
        _, logdet_x = np.linalg.slogdet(X)
        tr = np.trace(np.linalg.solve(cov, X), axis1=-2, axis2=-1)
        r["log_prob"] = (-df * p / 2 * math.log(2) - df / 2 * logdet_s - mvlgamma(df / 2, p)
                         + (df - p - 1) / 2 * logdet_x - tr / 2)
    return r


def wishart_kl(df_p, cov_p, df_q, cov_q):
    p = cov_p.shape[-1]
    _, ld_p = np.linalg.slogdet(cov_p)
    _, ld_q = np.linalg.slogdet(cov_q)
    tr = np.trace(np.linalg.solve(cov_q, cov_p))
    return (df_q / 2 * (ld_q - ld_p) + df_p / 2 * (tr - p) + mvlgamma(df_q / 2, p) - mvlgamma(df_p / 2, p)
            + (df_p - df_q) / 2 * mvdigamma(df_p / 2, p))
