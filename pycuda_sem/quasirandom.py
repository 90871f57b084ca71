"""torch.quasirandom.SobolEngine: Sobol low-discrepancy points in [0, 1)^d.

The direction numbers are built here from Joe and Kuo's primitive
polynomials and initial values (_sobol_table.py, dimensions 1 to 1111) by
Bratley and Fox's recurrence, to 30 bits as torch keeps them, so the
points are torch's bit for bit. Points come in Gray-code order (Antonov and
Saleev): point k is the XOR of the direction numbers picked by the bits of
k ^ (k >> 1), so any stretch of the sequence is computed directly, without
walking it point by point.

scramble=True applies Matousek's linear matrix scrambling (a random unit
lower-triangular binary matrix a dimension, acting on the digits of every
direction number) and a random digital shift, which keep the net
properties of the sequence. The random bits come from NumPy's generator
seeded with `seed` (or with a number drawn from this package's global
generator when seed is None), so a seed gives the same points every time;
they are not torch's numbers (torch draws them from its own CPU generator).

The state lives on the CPU, as torch's; points are CPU tensors of the
default dtype (or dtype=)."""
import numpy as _np

from . import _C

__all__ = ["SobolEngine"]

_TABLE_DIMS = 1111  # dimensions _sobol_table.py holds
_table_cache = None


def _table():
    """[(s, a, m)] for dimensions 2, 3, ... (parsed once)."""
    global _table_cache
    if _table_cache is None:
        from ._sobol_table import TABLE
        rows = []
        for entry in TABLE.split():
            a, m = entry.split(":")
            m = [int(v) for v in m.split(",")]
            rows.append((len(m), int(a), m))
        _table_cache = rows
    return _table_cache


def _direction_numbers(dimension, bits):
    """(dimension, bits) int64: v[d, i] = m_(i+1) << (bits - 1 - i), the
    m beyond the initial ones from the primitive polynomial's recurrence
    m_i = 2 c_1 m_(i-1) ^ 4 c_2 m_(i-2) ^ ... ^ 2^s m_(i-s) ^ m_(i-s)."""
    v = _np.zeros((dimension, bits), dtype=_np.int64)
    v[0] = [1 << (bits - 1 - i) for i in range(bits)]  # dimension 1: every m is 1
    for d, (s, a, m) in enumerate(_table()[:dimension - 1], start=1):
        row = [m[i] << (bits - 1 - i) for i in range(min(s, bits))]
        for i in range(s, bits):
            x = row[i - s] ^ (row[i - s] >> s)
            for k in range(1, s):
                if (a >> (s - 1 - k)) & 1:
                    x ^= row[i - k]
            row.append(x)
        v[d] = row
    return v


class SobolEngine:
    """SobolEngine(dimension, scramble=False, seed=None): draws points of
    the Sobol sequence of that dimension (1 to 1111 here; torch's range is
    up to 21201, the rest raises NotImplementedError)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is [1, %d]"
                             % self.MAXDIM)
        if dimension > _TABLE_DIMS:
            raise NotImplementedError("SobolEngine: pycuda_sem holds direction numbers for %d "
                                      "dimensions, got dimension=%d" % (_TABLE_DIMS, dimension))
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _direction_numbers(dimension, self.MAXBIT)
        if scramble:
            state, shift = self._scrambled(state)
        else:
            shift = _np.zeros(dimension, dtype=_np.int64)
        self.sobolstate = _C.from_numpy(state)
        self.shift = _C.from_numpy(shift)
        self.quasi = self.shift.clone()
        self._first_point = (self.quasi.double() / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scrambled(self, state):
        """The direction numbers under a random linear matrix scramble, and a
        random digital shift."""
        seed = self.seed
        if seed is None:  # torch draws from its global generator here too
            seed = int(_C.randint(0, 2 ** 62, (1,)).item())
        rng = _np.random.default_rng(int(seed) % 2 ** 64)
        bits, dim = self.MAXBIT, self.dimension
        shift = (rng.integers(0, 2, (dim, bits)) << _np.arange(bits)).sum(-1).astype(_np.int64)
        ltm = _np.tril(rng.integers(0, 2, (dim, bits, bits)), -1)
        ltm[:, _np.arange(bits), _np.arange(bits)] = 1  # unit diagonal: the scramble is invertible
        # digits[d, j, i]: digit i (1/2 first) of direction number j of dimension d
        weights = _np.int64(1) << (bits - 1 - _np.arange(bits))
        digits = (state[:, :, None] // weights) & 1
        mixed = _np.einsum("dik,djk->dji", ltm, digits) & 1
        return (mixed * weights).sum(-1).astype(_np.int64), shift

    def _points(self, start, n):
        """Points start .. start + n - 1 of the sequence, as integers."""
        if start + n > 2 ** self.MAXBIT:
            raise RuntimeError("SobolEngine: at most 2**%d points can be drawn" % self.MAXBIT)
        k = _np.arange(start, start + n, dtype=_np.int64)
        gray = k ^ (k >> 1)
        state = self.sobolstate.numpy()
        acc = _np.broadcast_to(self.shift.numpy(), (n, self.dimension)).copy()
        for b in range(self.MAXBIT):
            on = ((gray >> b) & 1).astype(bool)
            if on.any():
                acc[on] ^= state[:, b]
        return acc

    def _advance(self, n):
        self.num_generated += n
        last = max(self.num_generated - 1, 0)  # torch keeps the last point drawn
        self.quasi = _C.from_numpy(self._points(last, 1)[0].copy())

    def draw(self, n=1, out=None, dtype=None):
        """The next n points, shape (n, dimension)."""
        if dtype is None:
            dtype = _C.get_default_dtype()
        pts = self._points(self.num_generated, n)
        result = _C.from_numpy(pts.astype(_np.float64) / 2.0 ** self.MAXBIT).to(dtype)
        if n:
            self._advance(n)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of two
        (the balance properties of the sequence), else ValueError."""
        n = 2 ** m
        total_n = self.num_generated + n
        if total_n & (total_n - 1):
            raise ValueError("The balance properties of Sobol' points require n to be a power of "
                             "2. %d points have been previously generated, then: n=%d+2**%d=%d. "
                             "If you still want to do this, please use 'SobolEngine.draw()' "
                             "instead." % (self.num_generated, self.num_generated, m, total_n))
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi = self.shift.clone()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip n points (as drawing them without using them)."""
        if n:
            self._advance(n)
        return self

    def __repr__(self):
        parts = ["dimension=%d" % self.dimension]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append("seed=%s" % (self.seed,))
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))
