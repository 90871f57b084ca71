"""The iteration core's plan (csrc/core/iter.c), checked on the CPU: the
kernels trust it for every layout (issue 13)."""
import pycuda_sem as torch

plan = torch._C._iter_plan


def test_contiguous_collapses_to_one_dim():
    a = torch.empty(4, 5, 6)
    sizes, strides, i32, contig = plan(a, a, torch.empty(4, 5, 6))
    assert sizes == [120] and strides == [[1], [1], [1]] and i32 and contig


def test_row_broadcast_keeps_two_dims():
    out, a, r = torch.empty(8, 16), torch.empty(8, 16), torch.empty(1, 16)
    sizes, strides, i32, contig = plan(out, a, r)
    assert sizes == [8, 16] and strides == [[16, 1], [16, 1], [0, 1]] and not contig


def test_transposed_input_and_output_order():
    x = torch.empty(16, 8)
    sizes, strides, _, _ = plan(torch.empty(8, 16), x.t())
    assert sizes == [8, 16] and strides == [[16, 1], [1, 8]]
    # a transposed output is walked in its memory order (fastest last)
    sizes, strides, _, _ = plan(x.t(), torch.empty(8, 16))
    assert sizes == [16, 8] and strides == [[8, 1], [1, 16]]


def test_stepped_and_size_one_dims():
    a = torch.empty(4, 1, 10)[:, :, 1:9:2]
    sizes, strides, _, contig = plan(torch.empty(4, 1, 4), a)
    assert sizes == [4, 4] and strides == [[4, 1], [10, 2]] and not contig
    # every other element of whole rows is one long stepped dim
    sizes, strides, _, _ = plan(torch.empty(4, 5), torch.empty(4, 10)[:, ::2])
    assert sizes == [20] and strides == [[1], [2]]
    # a permuted 3-D copy whose two outer dims merge into one transpose
    x = torch.empty(3, 4, 5)
    sizes, strides, _, _ = plan(torch.empty(5, 3, 4), x.permute(2, 0, 1))
    assert sizes == [5, 12] and strides == [[12, 1], [1, 5]]


def test_index32_flag():
    big = torch.empty(1).expand(1 << 31)  # stride 0: no memory, count too big
    sizes, _, i32, _ = plan(big, big)
    assert sizes == [1 << 31] and not i32
    sizes, _, i32, _ = plan(torch.empty(1).expand((1 << 31) - 1))
    assert i32
