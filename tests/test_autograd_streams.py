"""The note's "Stream semantics of backward passes", on the GPU, under
adversarial timing: the stream the forward ran on (or the caller's) is kept
busy by a long kernel (torch.cuda._sleep), and the memory a wrong
implementation would read too early holds stale values (a freed block of the
same size filled with 7s, which the caching allocator hands out again).
One test runs the note's unsafe pattern and checks that the race is really
observed, so the safe patterns' passing means something."""
import pytest

import pycuda_sem as torch

pytestmark = pytest.mark.cuda

N = 1 << 16
LONG = 200_000_000  # cycles: a few tens of milliseconds on an H100


def _inputs():
    x = torch.rand(N, device="cuda") + 0.5
    w = (torch.rand(N, device="cuda") + 0.5).requires_grad_()
    return x, w


def _stale(shape):
    """Leaves a freed block of `shape` floats holding 7s in the allocator."""
    t = torch.full(shape, 7.0, device="cuda")
    del t


def test_backward_ops_run_on_the_forward_stream():
    x, w = _inputs()
    s = torch.cuda.Stream()
    seen = []
    with torch.cuda.stream(s):
        h = x * w
        h.register_hook(lambda g: seen.append(torch.cuda.current_stream()))
        y = h.sum()
    torch.cuda.synchronize()
    y.backward()  # called from the default stream's context
    assert seen == [s]
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    torch.cuda.synchronize()
    assert torch.equal(w.grad, x)


def test_gradients_usable_on_the_calling_stream_when_the_forward_stream_is_busy():
    # the forward (and so the backward) runs on s, which is kept busy; the
    # caller reads the gradient on its own stream right after backward()
    x, w = _inputs()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = (x * w).sum()
    torch.cuda.synchronize()
    _stale((N,))
    with torch.cuda.stream(s):
        torch.cuda._sleep(LONG)
    y.backward()
    got = w.grad.clone()  # on the default stream: ordered after the backward work
    torch.cuda.synchronize()
    assert torch.equal(got, x)


def _forward_on(strm, x, w):
    with torch.cuda.stream(strm):
        return (x * w).sum()


def test_safe_initial_grad_populated_in_the_same_stream_context():
    x, w = _inputs()
    strm = torch.cuda.Stream()
    loss = _forward_on(strm, x, w)
    torch.cuda.synchronize()
    _stale(())
    torch.cuda._sleep(LONG)  # the default stream is busy, strm is not
    with torch.cuda.stream(strm):
        loss.backward(gradient=torch.ones_like(loss))
    torch.cuda.synchronize()
    assert torch.equal(w.grad, x)


def test_safe_initial_grad_with_synchronization():
    x, w = _inputs()
    strm = torch.cuda.Stream()
    loss = _forward_on(strm, x, w)
    torch.cuda.synchronize()
    _stale(())
    torch.cuda._sleep(LONG)
    initial_grad = torch.ones_like(loss)  # queued on the busy default stream
    strm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(strm):
        initial_grad.record_stream(strm)
        loss.backward(gradient=initial_grad)
    torch.cuda.synchronize()
    assert torch.equal(w.grad, x)


def test_unsafe_initial_grad_pattern_observes_the_race():
    # The note's unsafe pattern: initial_grad is populated on the default
    # stream (busy), backward runs on strm without waiting, so the backward
    # reads the block before the fill: its stale 7s scale the gradient.
    x, _ = _inputs()
    raced = 0
    for _ in range(3):
        w = (torch.rand(N, device="cuda") + 0.5).requires_grad_()
        strm = torch.cuda.Stream()
        loss = _forward_on(strm, x, w)
        torch.cuda.synchronize()
        _stale(())
        torch.cuda._sleep(LONG)
        initial_grad = torch.ones_like(loss)
        with torch.cuda.stream(strm):
            loss.backward(gradient=initial_grad)
        torch.cuda.synchronize()
        if torch.equal(w.grad, 7 * x):
            raced += 1
        else:
            assert torch.equal(w.grad, x)
    assert raced >= 1, "the unsafe pattern never showed the race: the tests have no teeth"


def test_accumulation_into_existing_grad_waits_for_the_caller():
    # .grad exists from a first backward; the second backward's forward ran
    # on s (busy); the accumulated value must be the sum of both
    x, w = _inputs()
    (x * w).sum().backward()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = (x * w).sum()
        torch.cuda._sleep(LONG)
    y.backward()
    torch.cuda.synchronize()
    assert torch.equal(w.grad, 2 * x)


def test_backward_from_a_side_stream_context_orders_that_stream():
    x, w = _inputs()
    y = (x * w).sum()  # forward on the default stream
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    torch.cuda._sleep(LONG)  # the forward stream (default) is busy
    with torch.cuda.stream(s):
        y.backward(gradient=torch.ones_like(y))
        got = w.grad * 1  # on s: must see the finished gradient
    torch.cuda.synchronize()
    assert torch.equal(got, x)


def test_statistics_back_to_baseline():
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    x, w = _inputs()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = (x * w).sum()
    y.backward()
    del x, w, y
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == base
