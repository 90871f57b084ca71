"""Recurrent layers: RNN, LSTM, GRU and their cells, with torch's parameter
names and layouts (weight_ih_l0, ..., gates in torch's order: LSTM i, f, g,
o; GRU r, z, n), its initialisation (uniform in +-1/sqrt(hidden_size)),
batch_first, unbatched inputs, stacked and bidirectional layers and dropout
between layers. No cuDNN: the input projection of every time step is one
matmul per layer and direction, then one small matmul and a few elementwise
ops per step, all differentiable C ops (backpropagation through time is the
autograd engine's). PackedSequence inputs run on their packed rows directly:
at step t only the batch_sizes[t] sequences still running are stepped, the
others keep their state (see _run). LSTM with proj_size P projects each
step's hidden state to P values (weight_hr_l*), as torch: h is [.., P] and
feeds the next step and layer, c stays [.., hidden_size]."""
import math
import warnings

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(gx, h, c, w_hh, b_hh, w_hr=None):
    gates = gx + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(gx, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    xr, xz, xn = gx.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (1 - z) * n + z * h


def _rnn_step(gx, h, w_hh, b_hh, relu):
    pre = gx + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          "dropout=%s and num_layers=%d" % (dropout, num_layers))
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        if not isinstance(proj_size, int) or isinstance(proj_size, bool) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real = proj_size or hidden_size  # the size of h
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                size_in = input_size if layer == 0 else real * dirs
                sfx = "_l%d%s" % (layer, "_reverse" if d else "")
                shapes = [("weight_ih", (gate, size_in)), ("weight_hh", (gate, real))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(_C.empty(shape, device=device,
                                                                 dtype=dtype)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def flatten_parameters(self):
        """cuDNN's weight packing in torch; nothing to do here."""

    def _weights(self, layer, d):
        sfx = "_l%d%s" % (layer, "_reverse" if d else "")
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        name = type(self).__name__
        packed = isinstance(input, PackedSequence)
        if packed:
            # PackedSequence: data [N, I] holds the steps time-major, sequences sorted
            # longest first, so the sequences still running at step t are a prefix
            # of the batch (batch_sizes[t] rows); batch_first does not apply
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if data.dim() != 2:
                raise RuntimeError("input must have 2 dimensions, got %d" % data.dim())
            sizes = [int(v) for v in batch_sizes.tolist()]
            unbatched = False
            x = data
        else:
            if not isinstance(input, _C.Tensor):
                raise TypeError("%s: expected a Tensor or a PackedSequence as input, got %s"
                                % (name, type(input).__name__))
            if input.dim() not in (2, 3):
                raise ValueError("%s: Expected input to be 2D or 3D, got %dD instead"
                                 % (name, input.dim()))
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first
                                                      else input)
            sizes = [x.size(1)] * x.size(0)  # a padded batch: every row runs every step
            steps_pad = x.size(0)
            x = x.reshape((x.size(0) * x.size(1), x.size(2)))
        if x.size(-1) != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected %d, got %d"
                               % (self.input_size, x.size(-1)))
        batch = sizes[0] if sizes else (0 if packed else input.size(0 if self.batch_first
                                                                      else 1))
        dirs = 2 if self.bidirectional else 1
        want = (self.num_layers * dirs, batch, self.proj_size or self.hidden_size)
        want_c = (self.num_layers * dirs, batch, self.hidden_size)
        if hx is None:
            h0 = _C.zeros(want, dtype=x.dtype, device=x.device)
            hx = (h0, _C.zeros(want_c, dtype=x.dtype, device=x.device) if self.proj_size else h0) \
                if lstm else h0
        else:
            if unbatched:
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
            for i, h in enumerate(hx if lstm else (hx,)):
                w = want_c if i == 1 else want
                if tuple(h.shape) != w:
                    raise RuntimeError("Expected hidden%s size %s, got %s"
                                       % ("[%d]" % i if lstm else "", w, list(h.shape)))
            if packed and sorted_indices is not None:  # hx is in the caller's batch order
                hx = (tuple(h.index_select(1, sorted_indices) for h in hx) if lstm
                      else hx.index_select(1, sorted_indices))
        out, hn, cn = self._run(x, sizes, hx, lstm, dirs)
        if packed:
            if unsorted_indices is not None:  # back to the caller's batch order
                hn = hn.index_select(1, unsorted_indices)
                cn = cn.index_select(1, unsorted_indices) if lstm else None
            out = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            out = out.reshape((steps_pad, batch, out.size(-1)))
            if unbatched:
                out, hn = out.squeeze(1), hn.squeeze(1)
                cn = cn.squeeze(1) if lstm else None
            elif self.batch_first:
                out = out.transpose(0, 1)
        return (out, (hn, cn)) if lstm else (out, hn)

    def _run(self, x, sizes, hx, lstm, dirs):
        """All layers over flat time-major rows x [N, I], sizes[t] rows at step t
        (a non-increasing prefix of the batch). Returns the last layer's rows
        [N, dirs*H] and the final states [layers*dirs, B, H]. A sequence that has
        ended keeps its state untouched (the rows past sizes[t] are carried over),
        so the forward direction ends at each sequence's own last step; the
        reverse direction walks t downwards, and a sequence's rows join at its own
        last step still holding its initial state."""
        offs = [0]
        for n in sizes:
            offs.append(offs[-1] + n)
        h_n, c_n = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, d)
                gx = F.linear(layer_in, w_ih, b_ih)  # every step's input projection at once
                k = layer * dirs + d
                h = (hx[0] if lstm else hx)[k]
                c = hx[1][k] if lstm else None
                seq = [None] * len(sizes)
                for t in (range(len(sizes) - 1, -1, -1) if d else range(len(sizes))):
                    n = sizes[t]
                    full = n == h.size(0)
                    g, hp = gx[offs[t]:offs[t + 1]], (h if full else h[:n])
                    if lstm:
                        hp, cp = _lstm_step(g, hp, c if full else c[:n], w_hh, b_hh, w_hr)
                        c = cp if full else _C.cat([cp, c[n:]], 0)
                    elif self.mode == "GRU":
                        hp = _gru_step(g, hp, w_hh, b_hh)
                    else:
                        hp = _rnn_step(g, hp, w_hh, b_hh, self.mode == "RNN_RELU")
                    h = hp if full else _C.cat([hp, h[n:]], 0)
                    seq[t] = hp
                outs.append(_C.cat(seq, 0) if seq else
                            _C.zeros((0, self.proj_size or self.hidden_size), dtype=x.dtype,
                                     device=x.device))
                h_n.append(h)
                c_n.append(c)
            layer_in = outs[0] if dirs == 1 else _C.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        return layer_in, _C.stack(h_n, 0), (_C.stack(c_n, 0) if lstm else None)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        return s.format(**self.__dict__)


class RNN(RNNBase):
    """Elman RNN: h' = tanh (or relu)(x W_ih^T + b_ih + h W_hh^T + b_hh)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError("Unknown nonlinearity '%s'. Select from 'tanh' or 'relu'."
                             % nonlinearity)
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h0, c0)) -> output, (h_n, c_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; forward(input, h0) -> output, h_n."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


class RNNCellBase(Module):
    """The base of RNNCell, LSTMCell and GRUCell: weight_ih [num_chunks *
    hidden_size, input_size], weight_hh [num_chunks * hidden_size,
    hidden_size] and the two biases, initialised as torch's."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(_C.empty((g, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_C.empty((g, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_C.empty(g, device=device, dtype=dtype))
            self.bias_hh = Parameter(_C.empty(g, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _prepare(self, input, hx, n):
        if input.dim() not in (1, 2):
            raise ValueError("%s: Expected input to be 1D or 2D, got %dD instead"
                             % (type(self).__name__, input.dim()))
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            z = _C.zeros((x.size(0), self.hidden_size), dtype=x.dtype, device=x.device)
            hx = (z,) * n
        else:
            hx = tuple(h.unsqueeze(0) if unbatched else h for h in (hx if n > 1 else (hx,)))
        return x, hx, unbatched

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.bias is not True:
            s += ", bias={bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError("Unknown nonlinearity: %s" % nonlinearity)
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      self.nonlinearity == "relu")
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                          self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h
