"""Samplers, as torch.utils.data.sampler: iterables of dataset indices (or of
lists of indices, for BatchSampler). The random ones draw from a Generator in
the same calls, in the same chunks, as torch's, so that a seeded generator
gives a fixed order."""
import pycuda_sem as _t

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: `__iter__` yields indices; `__len__` when it is known."""

    def __init__(self, data_source=None):
        pass  # torch accepts and ignores it (deprecated argument)

    def __iter__(self):
        raise NotImplementedError


def _fresh_generator():
    # torch: a generator seeded from the default one, so that an unseeded
    # sampler still follows manual_seed()
    return _t.Generator().manual_seed(int(_t.empty((), dtype=_t.int64).random_().item()))


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (a fresh one after each `len` draws when
    num_samples exceeds it), or num_samples draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # chunks of 32, as torch, so that the stream matches its draws
            for _ in range(self.num_samples // 32):
                yield from _t.randint(high=n, size=(32,), dtype=_t.int64, generator=generator).tolist()
            yield from _t.randint(high=n, size=(self.num_samples % 32,), dtype=_t.int64,
                                  generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _t.randperm(n, generator=generator).tolist()
            yield from _t.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _t.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def _multinomial(weights, num_samples, replacement, generator):
    """torch.multinomial for one row of weights, where the core has none:
    inverse CDF for draws with replacement; without, the exponential-race
    trick (the num_samples smallest Exp(1)/w keys), which picks in the same
    distribution as sequential draws without replacement."""
    mult = getattr(_t, "multinomial", None)
    if mult is not None:
        return mult(weights, num_samples, replacement, generator=generator)
    u = _t.rand(num_samples if replacement else weights.numel(), dtype=_t.float64, generator=generator)
    if replacement:
        cdf = _t.cumsum(weights, 0)
        idx = _t.searchsorted(cdf, u * cdf[-1], right=True)
        return _t.clamp(idx, max=weights.numel() - 1)
    if int((weights > 0).sum().item()) < num_samples:
        raise RuntimeError("invalid multinomial distribution (with replacement=False, "
                           "not enough non-negative category to sample)")
    keys = -_t.log1p(-u) / weights  # Exp(1) / w; zero weights give inf, never picked
    return _t.argsort(keys)[:num_samples]


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to weights."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = _t.as_tensor(weights, dtype=_t.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        return iter(_multinomial(self.weights, self.num_samples, self.replacement, self.generator).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler`; the last one shorter unless
    drop_last."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            while True:
                batch = [i for _, i in zip(range(self.batch_size), it)]
                if len(batch) < self.batch_size:
                    return
                yield batch
        while True:
            batch = [i for _, i in zip(range(self.batch_size), it)]
            if not batch:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
