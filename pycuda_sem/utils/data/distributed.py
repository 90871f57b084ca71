"""DistributedSampler, as torch.utils.data.distributed: each of num_replicas
processes takes every num_replicas-th index of one (seeded, per-epoch)
permutation, padded or truncated to a multiple of num_replicas. Given
num_replicas and rank it needs no process group."""
import math

import pycuda_sem as _t

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _group_size_and_rank():
    dist = getattr(_t, "distributed", None)
    ok = dist is not None and getattr(dist, "is_available", lambda: False)() \
        and getattr(dist, "is_initialized", lambda: False)()
    if not ok:
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _group_size_and_rank()[0]
        if rank is None:
            rank = _group_size_and_rank()[1]
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # drop the tail so that every replica gets the same count
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            # seed + epoch: every replica computes the same permutation
            # (a generator of its own: the default one is left as it was)
            g = _t.Generator().manual_seed(self.seed + self.epoch)
            indices = _t.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """A different shuffle each epoch (call before creating the iterator)."""
        self.epoch = epoch
