"""float64 reference formulas (NumPy + math.lgamma, no scipy) for the
distribution tests: log densities, entropies, moments and cdfs written
out by hand, plus digamma and the regularised incomplete gamma."""
import math

import numpy as np

EULER = 0.57721566490153286061
lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _digamma1(x):
    r = 0.0
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


digamma = np.vectorize(_digamma1, otypes=[np.float64])


def _gammainc1(a, x):
    """P(a, x) by its power series (fine for the moderate x of the tests)."""
    if x <= 0:
        return 0.0
    term = 1.0 / a
    total = term
    for n in range(1, 2000):
        term *= x / (a + n)
        total += term
        if term < total * 1e-17:
            break
    return math.exp(a * math.log(x) - x - math.lgamma(a)) * total


gammainc = np.vectorize(_gammainc1, otypes=[np.float64])


def norm_cdf(z):
    return 0.5 * (1 + _erf(z / math.sqrt(2)))


def univariate(name, p, x):
    """{'log_prob', 'entropy', 'mean', 'variance', 'cdf'} of distribution name with float64 params p at x."""
    r = {}
    if name == "Exponential":
        lam = p["rate"]
        r = dict(log_prob=np.log(lam) - lam * x, entropy=1 - np.log(lam), mean=1 / lam, variance=lam ** -2.0,
                 cdf=1 - np.exp(-lam * x))
    elif name == "Laplace":
        m, b = p["loc"], p["scale"]
        r = dict(log_prob=-np.log(2 * b) - np.abs(x - m) / b, entropy=1 + np.log(2 * b), mean=m, variance=2 * b * b,
                 cdf=np.where(x < m, 0.5 * np.exp((x - m) / b), 1 - 0.5 * np.exp(-(x - m) / b)))
    elif name == "Cauchy":
        m, g = p["loc"], p["scale"]
        r = dict(log_prob=-np.log(np.pi * g * (1 + ((x - m) / g) ** 2)), entropy=np.log(4 * np.pi * g),
                 cdf=np.arctan((x - m) / g) / np.pi + 0.5)
    elif name == "Gumbel":
        m, b = p["loc"], p["scale"]
        z = (x - m) / b
        r = dict(log_prob=-np.log(b) - z - np.exp(-z), entropy=np.log(b) + 1 + EULER, mean=m + b * EULER,
                 variance=np.pi ** 2 / 6 * b * b, cdf=np.exp(-np.exp(-z)))
    elif name == "HalfNormal":
        s = p["scale"]
        r = dict(log_prob=0.5 * np.log(2 / np.pi) - np.log(s) - x * x / (2 * s * s),
                 entropy=0.5 * np.log(np.pi * np.e / 2) + np.log(s), mean=s * np.sqrt(2 / np.pi),
                 variance=s * s * (1 - 2 / np.pi), cdf=_erf(x / (s * np.sqrt(2))))
    elif name == "HalfCauchy":
        s = p["scale"]
        r = dict(log_prob=np.log(2 / (np.pi * s)) - np.log1p((x / s) ** 2), entropy=np.log(2 * np.pi * s),
                 cdf=2 / np.pi * np.arctan(x / s))
    elif name == "LogNormal":
        m, s = p["loc"], p["scale"]
        r = dict(log_prob=-np.log(x * s * np.sqrt(2 * np.pi)) - (np.log(x) - m) ** 2 / (2 * s * s),
                 entropy=m + 0.5 + 0.5 * np.log(2 * np.pi * s * s), mean=np.exp(m + s * s / 2),
                 variance=(np.exp(s * s) - 1) * np.exp(2 * m + s * s), cdf=norm_cdf((np.log(x) - m) / s))
    elif name in ("Gamma", "Chi2"):
        a, b = (p["concentration"], p["rate"]) if name == "Gamma" else (p["df"] / 2, 0.5 + 0 * p["df"])
        r = dict(log_prob=a * np.log(b) + (a - 1) * np.log(x) - b * x - lgamma(a),
                 entropy=a - np.log(b) + lgamma(a) + (1 - a) * digamma(a), mean=a / b, variance=a / b ** 2,
                 cdf=gammainc(a, b * x))
    elif name == "Beta":
        a, b = p["concentration1"], p["concentration0"]
        lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
        r = dict(log_prob=(a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta,
                 entropy=lbeta - (a - 1) * digamma(a) - (b - 1) * digamma(b) + (a + b - 2) * digamma(a + b),
                 mean=a / (a + b), variance=a * b / ((a + b) ** 2 * (a + b + 1)))
    elif name == "StudentT":
        nu, m, s = p["df"], p["loc"], p["scale"]
        y = (x - m) / s
        lbeta = lgamma(nu / 2) + math.lgamma(0.5) - lgamma((nu + 1) / 2)
        r = dict(log_prob=-(nu + 1) / 2 * np.log1p(y * y / nu) - np.log(s) - 0.5 * np.log(nu) - lbeta,
                 entropy=np.log(s) + (nu + 1) / 2 * (digamma((nu + 1) / 2) - digamma(nu / 2)) + 0.5 * np.log(nu) + lbeta,
                 mean=m, variance=s * s * nu / (nu - 2))
    elif name == "Geometric":
        q = p["probs"]
        r = dict(log_prob=x * np.log1p(-q) + np.log(q), entropy=-(q * np.log(q) + (1 - q) * np.log1p(-q)) / q,
                 mean=1 / q - 1, variance=(1 - q) / q ** 2, cdf=1 - (1 - q) ** (np.floor(x) + 1))
    elif name == "Poisson":
        lam = p["rate"]
        lp = x * np.log(lam) - lam - lgamma(x + 1)
        cdf = np.array([sum(math.exp(k * math.log(lv) - lv - math.lgamma(k + 1)) for k in range(int(xv) + 1))
                        for lv, xv in zip(lam, x)])
        r = dict(log_prob=lp, mean=lam, variance=lam, cdf=cdf)
    elif name == "Binomial":
        n, q = p["total_count"], p["probs"]
        lp = lgamma(n + 1) - lgamma(x + 1) - lgamma(n - x + 1) + x * np.log(q) + (n - x) * np.log1p(-q)
        cdf = np.array([sum(math.exp(math.lgamma(nv + 1) - math.lgamma(k + 1) - math.lgamma(nv - k + 1)
                                     + k * math.log(qv) + (nv - k) * math.log1p(-qv)) for k in range(int(xv) + 1))
                        for nv, qv, xv in zip(n, q, x)])
        ks = np.arange(0, int(n.max()) + 1)[:, None]
        lpk = lgamma(n + 1) - lgamma(ks + 1) - lgamma(np.maximum(n - ks, 0) + 1) + ks * np.log(q) + (n - ks) * np.log1p(-q)
        ent = -(np.where(ks <= n, np.exp(lpk) * lpk, 0)).sum(0)
        r = dict(log_prob=lp, mean=n * q, variance=n * q * (1 - q), cdf=cdf, entropy=ent)
    return r
