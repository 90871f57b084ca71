"""Printing tensors in PyTorch's format.

``repr(t)`` must read exactly as PyTorch prints the same values, because users
compare outputs with notebooks and documentation. The rules, as PyTorch
applies them:

* one formatter decides the width of every element of a tensor (of the
  summarised elements when the tensor is summarised);
* integer dtypes and bools print with ``str``; the width is the widest value;
* floating tensors whose non-zero finite values are all integers print as
  ``1.`` (integer mode), unless the largest is over 1e8 or the largest/smallest
  ratio over 1000, which selects scientific notation;
* otherwise values print with ``precision`` digits, or in scientific notation
  when the ratio is over 1000, the largest over 1e8 or the smallest under 1e-4;
* float16 and bfloat16 are formatted through float32, complex numbers with one
  formatter for the real parts and one for the imaginary parts;
* tensors with more than ``threshold`` elements show ``edgeitems`` at each end
  of every dimension with ``...`` between;
* suffixes: ``device='cuda:0'`` for CUDA tensors, ``dtype=`` unless the dtype is
  the default one, int64, bool or the default complex type, ``size=`` for
  empty tensors that are not 1-D.

The code below is written from those rules; it works on a CPU copy and calls
``tolist()`` on 1-D pieces, so it never touches the GPU more than once.
"""
import math

from . import _C


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set printing options, as torch.set_printoptions.

    profile: "default", "short" or "full" sets the first four together; the
    other arguments then override it.
    """
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current printing options as a dict."""
    return {k: getattr(PRINT_OPTS, k)
            for k in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


def _flatten(nested, out):
    if isinstance(nested, list):
        for x in nested:
            _flatten(x, out)
    else:
        out.append(nested)
    return out


def _values(t, summarize):
    """The values the formatter sees: all of them, or the summarised ones."""
    if not summarize:
        return _flatten(t.tolist(), [])
    e = PRINT_OPTS.edgeitems
    if t.dim() == 0:
        return [t.item()]
    if t.dim() == 1:
        if t.size(0) > 2 * e:
            return t[:e].tolist() + t[t.size(0) - e:].tolist()
        return t.tolist()
    if not e:
        return []
    n = t.size(0)
    rows = list(range(e)) + list(range(n - e, n)) if n > 2 * e else range(n)
    out = []
    for i in rows:
        out.extend(_values(t[i], True))
    return out


class _Formatter:
    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
        else:
            finite = [v for v in values if math.isfinite(v) and v != 0]
            if finite:
                absvals = [abs(v) for v in finite]
                vmin, vmax = min(absvals), max(absvals)
                for v in finite:
                    if v != math.ceil(v):
                        self.int_mode = False
                        break
                if self.int_mode:
                    # integers get a trailing "." to show the dtype is floating
                    if vmax / vmin > 1000.0 or vmax > 1.0e8:
                        self.sci_mode = True
                        for v in finite:
                            self.max_width = max(self.max_width, len(f"{v:.{p}e}"))
                    else:
                        for v in finite:
                            self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
                else:
                    if vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4:
                        self.sci_mode = True
                        for v in finite:
                            self.max_width = max(self.max_width, len(f"{v:.{p}e}"))
                    else:
                        for v in finite:
                            self.max_width = max(self.max_width, len(f"{v:.{p}f}"))
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def width(self):
        return self.max_width

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(val, f1, f2):
    real_str = f1.format(val.real)
    imag_str = (f2.format(val.imag) + "j").lstrip()
    # negative numbers, +0.0 and -0.0 bring their own sign
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _val_str(val, f1, f2):
    return _complex_str(val, f1, f2) if f2 is not None else f1.format(val)


def _vector_str(t, indent, summarize, f1, f2):
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    n = t.size(0)
    if summarize and not e:
        data = ["..."]
    elif summarize and n > 2 * e:
        data = ([_val_str(v, f1, f2) for v in t[:e].tolist()] + [" ..."] +
                [_val_str(v, f1, f2) for v in t[n - e:].tolist()])
    else:
        data = [_val_str(v, f1, f2) for v in t.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(t, indent, summarize, f1, f2=None):
    dim = t.dim()
    if dim == 0:
        return _val_str(t.item(), f1, f2)
    if dim == 1:
        return _vector_str(t, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = t.size(0)
    if summarize and n > 2 * e:
        slices = ([_tensor_str_with_formatter(t[i], indent + 1, summarize, f1, f2)
                   for i in range(e)] + ["..."] +
                  [_tensor_str_with_formatter(t[i], indent + 1, summarize, f1, f2)
                   for i in range(n - e, n)])
    else:
        slices = [_tensor_str_with_formatter(t[i], indent + 1, summarize, f1, f2)
                  for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t, indent):
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > PRINT_OPTS.threshold
    if t.dtype in (_C.float16, _C.bfloat16):
        t = t.float()
    if t.dtype.is_complex:
        real, imag = t.real, t.imag
        f1 = _Formatter(_values(real, summarize), True)
        f2 = _Formatter(_values(imag, summarize), True)
        return _tensor_str_with_formatter(t, indent, summarize, f1, f2)
    f1 = _Formatter(_values(t, summarize), t.dtype.is_floating_point)
    return _tensor_str_with_formatter(t, indent, summarize, f1)


def _add_suffixes(tensor_str, suffixes, indent, force_newline):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        n = len(suffix)
        if force_newline or last_line_len + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


def _str(t):
    """repr(t) and str(t)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    grad_fn, requires_grad = t.grad_fn, t.requires_grad
    t = t.detach()  # printing reads values; it is no part of the graph
    if t.is_cuda:
        suffixes.append("device='" + str(t.device) + "'")
        t = t.cpu()  # one transfer; everything below reads host memory
    default = _C.get_default_dtype()
    default_complex = _C.complex128 if default is _C.float64 else _C.complex64
    has_default_dtype = t.dtype in (default, default_complex, _C.int64, _C.bool)
    if t.numel() == 0:
        # the shape is shown when it is not (0,), as NumPy does
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        # nothing to infer the dtype from, so it is shown unless default
        if t.dtype is not default:
            suffixes.append("dtype=" + str(t.dtype))
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(t.shape)))
        if not has_default_dtype:
            suffixes.append("dtype=" + str(t.dtype))
        tensor_str = _tensor_str(t, indent)
    if grad_fn is not None:
        suffixes.append("grad_fn=<" + grad_fn.name() + ">")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + tensor_str, suffixes, indent, False)
