"""Still more layers as torch has them: FractionalMaxPool2d/3d,
CrossMapLRN2d (the legacy Lua-torch LRN) and AdaptiveLogSoftmaxWithLoss
(Grave et al.'s adaptive softmax: a head over the frequent classes plus one
entry per tail cluster, each cluster a two-layer bottleneck projection).
Each keeps torch's attribute names, submodule layout and printing, and
calls its nn.functional form (nn/_functional_more3.py) or composes
existing layers."""
import collections

from ... import _C
from .. import functional as F
from .._functional_more3 import _cross_map_lrn2d
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module
from .utils import _as_tuple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d",
           "AdaptiveLogSoftmaxWithLoss"]


class _FractionalMaxPoolNd(Module):
    _d = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        d, name = self._d, type(self).__name__
        self.kernel_size = _as_tuple(kernel_size, d)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _as_tuple(output_size, d) if output_size is not None else None
        self.output_ratio = _as_tuple(output_ratio, d) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError("%s requires specifying either an output size, or a pooling ratio"
                             % name)
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError("output_ratio must be between 0 and 1 (got %s)" % (output_ratio,))

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._d == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over [N, C, H, W] (or [C, H, W])."""
    _d = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over [N, C, T, H, W] (or [C, T, H, W])."""
    _d = 3


class CrossMapLRN2d(Module):
    """x * (k + alpha/size * sum of squares over nearby channels)^-beta, 4-D input."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input [N, in_features], target [N]) -> (output, loss): output the
    log-probability of each row's target, loss the mean of -output.
    log_prob(input) gives the full [N, n_classes] log-probabilities and
    predict(input) their argmax."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and n_classes-1")
        if not div_value > 0:
            raise ValueError("div_value should be positive, got %r" % (div_value,))
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        tdim = target_.dim()
        if tdim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs "
                                   "with size %s" % (input_.shape,))
        elif tdim == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs "
                                   "with size %s" % (input_.shape,))
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        x = input_ if tdim else input_.unsqueeze(0)
        target = target_ if tdim else target_.unsqueeze(0)
        tl = [int(v) for v in target.tolist()]
        if any(not 0 <= v < self.n_classes for v in tl):
            raise RuntimeError("Target values should be in [0, %d], but values in range [%d, %d] "
                               "were found. " % (self.n_classes - 1, min(tl), max(tl)))
        dev = x.device
        # the head column each row reads: its own class in the shortlist, else its cluster's
        head_col = []
        output = _C.zeros(len(tl), dtype=x.dtype, device=dev)
        bounds = [0] + self.cutoffs
        for v in tl:
            c = next(i for i in range(len(bounds) - 1) if bounds[i] <= v < bounds[i + 1])
            head_col.append(v if c == 0 else self.shortlist_size + c - 1)
        for i in range(1, len(bounds) - 1):
            rows = [r for r, v in enumerate(tl) if bounds[i] <= v < bounds[i + 1]]
            if not rows:
                continue
            ridx = _C.tensor(rows, dtype=_C.int64, device=dev)
            rel = _C.tensor([tl[r] - bounds[i] for r in rows], dtype=_C.int64, device=dev)
            lp = F.log_softmax(self.tail[i - 1](x.index_select(0, ridx)), dim=1)
            output = output.index_copy(0, ridx, lp.gather(1, rel.unsqueeze(1)).squeeze(1))
        head_lp = F.log_softmax(self.head(x), dim=1)
        cols = _C.tensor(head_col, dtype=_C.int64, device=dev).unsqueeze(1)
        output = output + head_lp.gather(1, cols).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if tdim else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        head_lp = F.log_softmax(head_output, dim=1)
        parts = [head_lp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            lp = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(lp + head_lp[:, self.shortlist_size + i].unsqueeze(1))
        return _C.cat(parts, 1)

    def log_prob(self, input):
        """[N, n_classes] (or [n_classes]) log-probabilities of every class."""
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        out = self._get_full_log_prob(x, self.head(x))
        return out.squeeze(0) if unbatched else out

    def predict(self, input):
        """The most likely class of each row."""
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        out = self._get_full_log_prob(x, self.head(x)).argmax(1)
        return out.squeeze(0) if unbatched else out
