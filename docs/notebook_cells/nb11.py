"""The cells of notebook 11_backward_streams (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("11_backward_streams")
def _():
    return [
        md("""
# Stream semantics of backward passes

The note's autograd section: each backward op runs on the stream its forward op ran
on, and the initial gradient handed to `backward()` is ordered with the backward pass
like any pair of ops in two stream contexts. This notebook runs the note's three
patterns under adversarial timing: a long kernel (`torch.cuda._sleep`) keeps one
stream busy, and the memory a too-early read would see holds stale values (a freed
block of the same size filled with 7s, which the caching allocator hands out again).
"""),
        code(HEADER),
        md("""
## Backward ops run on their forward's stream

The forward runs inside `torch.cuda.stream(s)`; `backward()` is called from the default
stream. A hook on the intermediate tensor records which stream is current while its
gradient is computed: it is `s`. When `backward()` returns, the calling stream is ordered
after all the backward work, so reading the gradient there is safe, even while `s` was
still busy.
"""),
        code("""
cuda = torch.device('cuda')
x = torch.rand(1 << 16, device=cuda) + 0.5
w = (torch.rand(1 << 16, device=cuda) + 0.5).requires_grad_()
s = torch.cuda.Stream()
seen = []
with torch.cuda.stream(s):
    h = x * w
    h.register_hook(lambda g: seen.append(torch.cuda.current_stream()))
    y = h.sum()
    torch.cuda._sleep(200_000_000)   # s is busy for a while
y.backward()                          # called from the default stream
print("hook ran on s:", seen == [s], "| y.grad_fn:", y.grad_fn.name())
print("gradient right on the default stream:", torch.equal(w.grad, x))
"""),
        md("""
## The initial gradient

The note's three patterns, each with the forward on `strm` and the default stream kept
busy before the initial gradient is written. `_stale()` leaves a freed one-element block
holding 7 in the allocator, so a backward that reads `initial_grad` before `ones_like`
wrote it computes `7 * x` instead of `x`.
"""),
        code("""
def setup():
    x = torch.rand(1 << 16, device=cuda) + 0.5
    w = (torch.rand(1 << 16, device=cuda) + 0.5).requires_grad_()
    strm = torch.cuda.Stream()
    with torch.cuda.stream(strm):
        loss = (x * w).sum()
    torch.cuda.synchronize()
    t = torch.full((), 7.0, device=cuda); del t      # a stale block for ones_like to reuse
    torch.cuda._sleep(200_000_000)                   # the default stream is busy
    return x, w, strm, loss

def verdict(x, w):
    torch.cuda.synchronize()
    return "right (grad == x)" if torch.equal(w.grad, x) else (
        "RACE: grad == 7 * x" if torch.equal(w.grad, 7 * x) else "other values")
"""),
        md("**Safe**: populating `initial_grad` and invoking backward in the same stream context."),
        code("""
x, w, strm, loss = setup()
with torch.cuda.stream(strm):
    loss.backward(gradient=torch.ones_like(loss))
print("safe, same context:", verdict(x, w))
"""),
        md("""
**Unsafe**: `initial_grad` is written on the (busy) default stream, backward runs on
`strm` without waiting. The backward reads the block before the write and the stale 7
shows in the gradient.
"""),
        code("""
x, w, strm, loss = setup()
initial_grad = torch.ones_like(loss)
with torch.cuda.stream(strm):
    loss.backward(gradient=initial_grad)
print("unsafe:", verdict(x, w))
"""),
        md("**Safe, with synchronization**: `wait_stream` plus `record_stream`, as the note writes it."),
        code("""
x, w, strm, loss = setup()
initial_grad = torch.ones_like(loss)
strm.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(strm):
    initial_grad.record_stream(strm)
    loss.backward(gradient=initial_grad)
print("safe, synchronized:", verdict(x, w))
"""),
        md("""
## Memory

Every gradient made on one stream and consumed on another is marked as used there (as
`record_stream` would), and saved tensors are released as soon as their node has run.
Once the tensors are gone the allocator's statistics are back where they started.
"""),
        code("""
torch.cuda.synchronize()
del x, w, strm, loss, initial_grad, h, y, seen
torch.cuda.synchronize()
print("memory_allocated after the run:", torch.cuda.memory_allocated(), "bytes")
"""),
    ]
