"""The cells of notebook 04_streams (written by docs/make_notebooks.py)."""
from notebook_cells.common import md, code, HEADER, notebook


@notebook("04_streams")
def _():
    return [
        md("""
# CUDA streams

A stream is an ordered queue of work on one device; work on *different* streams may run
in any relative order. Each device has a default stream; `torch.cuda.Stream()` gives
others. When you use a non-default stream, ordering is your job.
"""),
        code(HEADER),
        md("The note's **incorrect** example, unchanged:"),
        code("""
cuda = torch.device('cuda')
s = torch.cuda.Stream()  # Create a new stream.
A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)
with torch.cuda.stream(s):
    # sum() may start execution before normal_() finishes!
    B = torch.sum(A)
"""),
        md("""
Nothing in that code orders `sum` after `normal_`. The next cell tries to make the
race visible by keeping the default stream busy before the write that `sum` depends on.
In the run recorded here the race was **not** lost: `B` came out right. A right answer
from unsynchronised code proves nothing; the cell after it shows a race that was lost.
"""),
        code("""
A = torch.zeros((100, 100), device=cuda)
torch.cuda.synchronize()
torch.cuda._sleep(200_000_000)   # the default stream is busy for a while ...
A.fill_(1.0)                     # ... and only then writes A
with torch.cuda.stream(s):
    B = torch.sum(A)             # s does not wait for the default stream
print("B =", B.item(), "(the right answer is 10000.0)")
torch.cuda.synchronize()
"""),
        md("""
**With `wait_stream`**: `s.wait_stream(current_stream())` makes everything queued on
`s` afterwards wait for what the default stream has queued so far, without blocking the
host. That fixes the *input* side, but look at the output of the cell: `B` is produced
on `s` and `B.item()` reads it through the default stream, which does not wait for `s`.
"""),
        code("""
A = torch.zeros((100, 100), device=cuda)
torch.cuda.synchronize()
torch.cuda._sleep(200_000_000)
A.fill_(1.0)
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    B = torch.sum(A)
print("B =", B.item())
"""),
        md("""
The printed `B` is not the sum of the ones in `A`: the read happened before `sum`
finished on `s`, and it returned what that memory held before (the block had last held
an earlier result computed on `s`). This is the other half of the note's rule: a result
made on a side stream must be ordered before its use on the default stream too, with
`torch.cuda.current_stream().wait_stream(s)` (or `s.synchronize()`) before `B.item()`.

**`record_stream`**: the caching allocator gives a freed block back to the stream that
allocated it at once, which is safe for work on that stream only. If another
stream still uses the memory, `record_stream` tells the allocator to wait for that
stream before reusing the block. First, what happens without it:
"""),
        code("""
def free_while_side_stream_busy(record):
    t = torch.empty(1 << 20, device=cuda)       # 4 MiB on the default stream
    p = t.data_ptr()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)          # s is busy ...
        u = t * 2                               # ... then reads t
    if record:
        t.record_stream(s)
    del t                                       # freed while s may still read it
    fresh = torch.empty(1 << 20, device=cuda)   # a new allocation on the default stream
    reused = fresh.data_ptr() == p
    s_done = s.query()
    torch.cuda.synchronize()
    return reused, s_done

print("without record_stream: new tensor got the freed block = %s while s was done = %s"
      % free_while_side_stream_busy(False))
print("with    record_stream: new tensor got the freed block = %s while s was done = %s"
      % free_while_side_stream_busy(True))
"""),
        md("""
Without `record_stream` the allocator handed the freed block straight to the new
tensor without looking at `s`. In the run recorded here `s` had already finished by then,
so no harm was done this time, but nothing checked it: had `s` still been running, a
write to the new tensor could have corrupted what `s` was reading. With `record_stream`,
while `s` was still busy, the block stayed out of circulation (`memory_snapshot()` shows
such a block as `active_pending_free`) and the new tensor got other memory.

The note's safe pattern, on a tensor made on the default stream and used on `s`:
"""),
        code("""
initial = torch.ones(1000, device=cuda)
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    initial.record_stream(s)
    total = initial.sum()
print(total.item())
"""),
        md("Ordering with events works the same way, and the host can ask a stream whether it is done:"),
        code("""
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
with torch.cuda.stream(s1):
    torch.cuda._sleep(100_000_000)
    done = torch.cuda.Event()
    done.record()
s2.wait_event(done)
print("s1 idle:", s1.query(), "| s2 marker done:", s2.record_event().query())
torch.cuda.synchronize()
print("after synchronize(): s1 idle:", s1.query())
print("current stream:", torch.cuda.current_stream(), "\\ndefault stream:", torch.cuda.default_stream())
print("priority range (low, high):", torch.cuda.Stream.priority_range())
"""),
        md("""
## Stream semantics of backward passes

Backward ops run on the stream of their forward ops, and the initial gradient passed to
`backward()` follows the stream rules shown above. Notebook `11_backward_streams` runs
the note's three patterns on the GPU, including the unsafe one losing its race.
"""),
    ]
