"""Autograd side by side with torch, one run, same GPU (issue 15's speed list):
- forward+backward of a 4-layer MLP, width 256, batch 64, float32: host time
  per step (the GPU work is tiny, so the step time is the host cost);
- forward+backward of a chain of 1,000 elementwise ops on 1024 floats;
- forward+backward of a 4-layer MLP of width 8192, batch 8192: throughput and
  peak max_memory_allocated.
The MLP is written with matmul, add and relu on raw tensors (W.t(), bias),
the same expression for both libraries. Ratio: torch's time / ours."""
import json
import os
import sys
import time

try:  # torch first: importing it into a process already holding pycuda_sem crashed
    import torch
except ImportError:  # pragma: no cover
    torch = None

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import pycuda_sem as ours  # noqa: E402


def mlp_params(lib, width, layers, dev):
    ps = []
    for _ in range(layers):
        w = (lib.randn(width, width, device=dev) * (1.0 / width ** 0.5)).requires_grad_()
        b = lib.zeros(width, device=dev).requires_grad_()
        ps.append((w, b))
    return ps


def mlp_step(lib, ps, x):
    h = x
    for w, b in ps:
        h = lib.relu(h @ w.t() + b)
    loss = h.sum()
    loss.backward()
    for w, b in ps:
        w.grad = None
        b.grad = None


def chain_step(lib, a):
    y = a
    for _ in range(1000):
        y = y * 1.0001
    y.sum().backward()
    a.grad = None


def timeit(lib, fn, iters, warm=3):
    for _ in range(warm):
        fn()
    lib.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    lib.cuda.synchronize()
    return (time.perf_counter() - t0) / iters


def host_time(lib, fn, iters):
    """Time per step with the GPU never the bottleneck: steps are small."""
    return timeit(lib, fn, iters)


def run():
    # the same TF32 setting on both sides: pycuda_sem allows TF32 by default
    # (as the note says), torch 2.x does not, so torch is switched to it here
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = True
    assert ours.backends.cuda.matmul.allow_tf32
    rows = []
    dev = "cuda"
    for name, lib in (("ours", ours), ("torch", torch)):
        if lib is None:
            continue
        lib.manual_seed(0)
        ps = mlp_params(lib, 256, 4, dev)
        x = lib.randn(64, 256, device=dev)
        t_small = host_time(lib, lambda: mlp_step(lib, ps, x), 200)
        a = lib.randn(1024, device=dev).requires_grad_()
        t_chain = timeit(lib, lambda: chain_step(lib, a), 20)
        del ps, x, a
        lib.cuda.synchronize()
        lib.cuda.empty_cache()
        ps = mlp_params(lib, 8192, 4, dev)
        xb = lib.randn(8192, 8192, device=dev)
        lib.cuda.synchronize()
        lib.cuda.reset_peak_memory_stats()
        t_big = timeit(lib, lambda: mlp_step(lib, ps, xb), 12, warm=3)
        peak = lib.cuda.max_memory_allocated()
        flops = 3 * 2 * 8192 ** 3 * 4
        rows.append((name, t_small, t_chain, t_big, flops / t_big / 1e12, peak))
        del ps, xb
        lib.cuda.synchronize()
        lib.cuda.empty_cache()
    print("| case | ours | torch | x torch |")
    print("| --- | ---: | ---: | ---: |")
    if len(rows) == 2:
        o, t = rows
        print("| MLP 4x256 batch 64 fwd+bwd, time/step | %.1f us | %.1f us | %.2f |"
              % (o[1] * 1e6, t[1] * 1e6, t[1] / o[1]))
        print("| chain of 1000 muls on 1024 floats fwd+bwd | %.2f ms | %.2f ms | %.2f |"
              % (o[2] * 1e3, t[2] * 1e3, t[2] / o[2]))
        print("| MLP 4x8192 batch 8192 fwd+bwd | %.1f TFLOP/s | %.1f TFLOP/s | %.2f |"
              % (o[4], t[4], t[3] / o[3]))
        print("| ... peak max_memory_allocated | %.0f MiB | %.0f MiB | %.3f (ours/torch) |"
              % (o[5] / 2 ** 20, t[5] / 2 ** 20, o[5] / t[5]))
    else:
        for r in rows:
            print(r)
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "results", "autograd.json"), "w") as f:
        json.dump(rows, f)


if __name__ == "__main__":
    if not ours.cuda.is_available():
        print("bench_autograd: no GPU, nothing measured")
        sys.exit(0)
    run()
