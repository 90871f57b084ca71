"""Independent(base, n): the last n batch dims of base become event dims
(log_prob and entropy summed over them)."""
from .distribution import Distribution


class Independent(Distribution):
    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        b = tuple(base_distribution.batch_shape)
        n = reinterpreted_batch_ndims
        if n > len(b):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             "actual %d vs %d" % (n, len(b)))
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        cut = len(b) - n
        super().__init__(b[:cut], b[cut:] + tuple(base_distribution.event_shape), validate_args)
        self.has_rsample = base_distribution.has_rsample

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def _sum(self, t):
        n = self.reinterpreted_batch_ndims
        return t.sum(tuple(range(-n, 0))) if n else t

    def log_prob(self, value):
        return self._sum(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum(self.base_dist.entropy())
