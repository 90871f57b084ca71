"""Padding layers over F.pad: Zero-, Constant-, Reflection-, Replication-
and CircularPad in 1, 2 and 3 dims; padding an int (every side) or a tuple
(left, right[, top, bottom[, front, back]]), printed as torch prints it."""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    _d = 1
    _mode = "constant"

    def __init__(self, padding, value=None):
        super().__init__()
        n = 2 * self._d
        self.padding = (padding,) * n if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != n:
            raise ValueError("%s expects padding of %d ints, got %r"
                             % (type(self).__name__, n, padding))
        if value is not None:
            self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return "%s" % (self.padding,)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)

    def extra_repr(self):
        return "padding=%s, value=%s" % (self.padding, self.value)


def _cls(name, base, d, mode=None, zero=False):
    attrs = {"_d": d}
    if mode:
        attrs["_mode"] = mode
    if zero:
        attrs["__init__"] = lambda self, padding: _ConstantPadNd.__init__(self, padding, 0.0)
        attrs["extra_repr"] = _PadNd.extra_repr
    return type(name, (base,), attrs)


ConstantPad1d = _cls("ConstantPad1d", _ConstantPadNd, 1)
ConstantPad2d = _cls("ConstantPad2d", _ConstantPadNd, 2)
ConstantPad3d = _cls("ConstantPad3d", _ConstantPadNd, 3)
ZeroPad1d = _cls("ZeroPad1d", _ConstantPadNd, 1, zero=True)
ZeroPad2d = _cls("ZeroPad2d", _ConstantPadNd, 2, zero=True)
ZeroPad3d = _cls("ZeroPad3d", _ConstantPadNd, 3, zero=True)
ReflectionPad1d = _cls("ReflectionPad1d", _PadNd, 1, "reflect")
ReflectionPad2d = _cls("ReflectionPad2d", _PadNd, 2, "reflect")
ReflectionPad3d = _cls("ReflectionPad3d", _PadNd, 3, "reflect")
ReplicationPad1d = _cls("ReplicationPad1d", _PadNd, 1, "replicate")
ReplicationPad2d = _cls("ReplicationPad2d", _PadNd, 2, "replicate")
ReplicationPad3d = _cls("ReplicationPad3d", _PadNd, 3, "replicate")
CircularPad1d = _cls("CircularPad1d", _PadNd, 1, "circular")
CircularPad2d = _cls("CircularPad2d", _PadNd, 2, "circular")
CircularPad3d = _cls("CircularPad3d", _PadNd, 3, "circular")
for _c in (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
           ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
           ReplicationPad2d, ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d):
    _c.__module__ = __name__
