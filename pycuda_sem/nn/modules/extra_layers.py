"""More layers as torch has them: MaxUnpool1d/2d/3d, LPPool1d/2d/3d,
AlphaDropout and FeatureAlphaDropout, and the losses
TripletMarginWithDistanceLoss and MultiLabelMarginLoss. Each stores its
options with torch's attribute names and printing and calls its
nn.functional form (nn/_functional_pool_idx.py, _functional_extra.py,
_functional_loss_more.py)."""
from .. import functional as F
from .distance import PairwiseDistance
from .loss import _Loss
from .module import Module
from .utils import _as_tuple

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "AlphaDropout", "FeatureAlphaDropout", "TripletMarginWithDistanceLoss",
           "MultiLabelMarginLoss"]


class _MaxUnpoolNd(Module):
    _d = 0
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        d = self._d
        self.kernel_size = _as_tuple(kernel_size, d)
        self.stride = _as_tuple(stride if stride is not None else kernel_size, d)
        self.padding = _as_tuple(padding, d)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride,
                                                              self.padding)


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d (values back at their indices)."""
    _d = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _d = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    _d = 3
    _fn = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool3d)


class _AlphaDropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return "p=%s, inplace=%s" % (self.p, self.inplace)


class AlphaDropout(_AlphaDropoutNd):
    """Alpha dropout for SELU networks (mean and variance kept); the identity
    in eval. As torch's, forward does not pass inplace on."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_AlphaDropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss over any distance function (a PairwiseDistance submodule
    by default, as torch's)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater than 0,"
                             " got %s instead" % margin)
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss (targets: class indices, -1 ends a row)."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)
