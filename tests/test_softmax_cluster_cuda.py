"""softmax / log_softmax of long rows split over a thread-block cluster
(kernels/softmax_cluster.cuh): 16-bit and float32 rows longer than 8 packs a
thread of 512, more rows than SMs, 2 (or, over 128 KiB a row, 4) blocks a
row on compute capability 9.0; other GPUs take the block kernels, with the
same results. Against a float64 NumPy reference, run to run bit-equal, with
the scalar ends of unaligned rows and with NaN and inf. (Split from
test_softmax_cuda.py, the suite's longest file.)"""
import numpy as np
import pytest

import pycuda_sem as pcs
from test_softmax_cuda import check, host, make, reference

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.float16, pcs.bfloat16])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("rows, K", [(133, 65536), (150, 50257), (133, 32768), (140, 65536), (300, 20001),
                                     (200, 32768), (200, 65536)])
def test_rows_split_over_a_cluster(dtype, log, rows, K):
    # rows longer than 8 packs a thread of 512, more rows than SMs: 2 (or,
    # over 128 KiB, 4) blocks of a thread-block cluster a row (3 smaller
    # ones for 200 rows of 64 or 128 KiB, whose 400 blocks would leave a
    # ragged second wave; float32 [200, 65536] falls back), each share in
    # shared memory, the max and sum exchanged between the blocks (compute
    # capability 9.0; other GPUs take the block kernels, same results). A
    # view one element in puts the scalar ends in the first block's share.
    x = make((rows, K), dtype, seed=rows + K % 89, scale=6.0)
    r = check(x, 1, log)
    f = pcs.log_softmax if log else pcs.softmax
    assert np.array_equal(host(f(x, 1)), host(r))  # the same bits again
    base = make((rows * K + 1,), dtype, seed=K + 2)
    check(base[1:].view(rows, K), 1, log)


@pytest.mark.parametrize("log", [False, True])
def test_cluster_rows_with_nan_and_inf(log):
    # a NaN late in a row (in the second block's share) makes the whole row
    # NaN, as in torch; a row of -inf gives NaN; +inf in a row gives NaN
    # too (inf - inf), as on the CPU; the other rows are untouched
    a = np.random.default_rng(7).standard_normal((140, 65536)).astype(np.float32) * 3
    a[3, 60000] = np.nan
    a[5, :] = -np.inf
    a[9, 40000] = np.inf
    x = pcs.tensor(a, device="cuda").half()
    f = pcs.log_softmax if log else pcs.softmax
    r = host(f(x, 1))
    assert np.isnan(r[3]).all() and np.isnan(r[5]).all() and np.isnan(r[9]).all()
    keep = [i for i in range(140) if i not in (3, 5, 9)]
    want = reference(host(x)[keep], 1, log)
    np.testing.assert_allclose(r[keep], want, rtol=2e-3, atol=2e-2 if log else 1e-4)
