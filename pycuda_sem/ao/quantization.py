"""pycuda_sem.ao.quantization (also pycuda_sem.quantization): the names of
torch's eager-mode quantization, for model code that mentions them.

pycuda_sem has no quantized dtypes or kernels. What a float model does with
these names works: QuantStub and DeQuantStub are identities until a model is
converted (as torch's are), and QuantWrapper wraps a module between them.
Every step that would quantize (prepare, convert, quantize_dynamic, the
qconfigs, observers and fake-quantize modules) raises NotImplementedError
that says so, at the call that needs it."""
from .._unavailable import unavailable as _unavailable, unavailable_class as _unavailable_class
from ..nn.modules.module import Module as _Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper", "quantize", "quantize_dynamic", "quantize_qat",
           "prepare", "prepare_qat", "convert", "fuse_modules", "fuse_modules_qat",
           "get_default_qconfig", "get_default_qat_qconfig", "QConfig", "QConfigMapping",
           "get_default_qconfig_mapping", "MinMaxObserver",
           "HistogramObserver", "PerChannelMinMaxObserver", "FakeQuantize"]

_WHY = "it has no quantized dtypes or kernels (quantize with torch from a saved state_dict)"


class _IdentityStub(_Module):
    """What QuantStub and DeQuantStub share: the identity until conversion,
    which pycuda_sem does not do; a given `qconfig` is kept."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_IdentityStub):
    """Marks where a float model's input would be quantized."""


class DeQuantStub(_IdentityStub):
    """Marks where a float model's output would be dequantized."""


class QuantWrapper(_Module):
    """`module` between a QuantStub and a DeQuantStub (both identities here)."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)

    def forward(self, x):
        return self.dequant(self.module(self.quant(x)))


def _raiser(name):
    def fn(*args, **kwargs):
        raise _unavailable("ao.quantization", name, _WHY)
    fn.__name__ = name
    fn.__doc__ = "torch.ao.quantization.%s: raises NotImplementedError (%s)." % (name, _WHY)
    return fn


_FUNCTIONS = ["quantize", "quantize_dynamic", "quantize_qat", "prepare", "prepare_qat", "convert",
              "fuse_modules", "fuse_modules_qat", "get_default_qconfig", "get_default_qat_qconfig",
              "get_default_qconfig_mapping"]
_CLASSES = ["QConfig", "QConfigMapping", "MinMaxObserver", "HistogramObserver",
            "PerChannelMinMaxObserver", "FakeQuantize"]
# qconfig values: looking one up is already a step towards quantizing
_VALUES = ["default_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "per_channel_dynamic_qconfig"]

globals().update({n: _raiser(n) for n in _FUNCTIONS})
globals().update({n: _unavailable_class("ao.quantization", n, _WHY) for n in _CLASSES})


def __getattr__(name):
    if name in _VALUES:
        raise _unavailable("ao.quantization", name, _WHY)
    raise AttributeError("module 'pycuda_sem.ao.quantization' has no attribute '%s'" % name)
