"""Copies between two GPUs (issue 3): 1 GiB from cuda:0 to cuda:1 and back.
Only built when two GPUs are visible. The copy runs on the source device's
current stream (the destination's stream waits for it), so the loop is
closed by synchronizing the source device, for every library alike."""
from harness import Case

TITLE = "Peer copies between two GPUs"

GB1 = 1 << 30


def _two_gpus():
    import pycuda_sem
    return pycuda_sem.cuda.device_count() >= 2


SETUP = {
    "pycuda_sem": "a0 = pcs.empty(%d, device='cuda:0'); a1 = pcs.empty(%d, device='cuda:1')" % (
        GB1 // 4, GB1 // 4),
    "torch": "a0 = torch.empty(%d, device='cuda:0'); a1 = torch.empty(%d, device='cuda:1')" % (
        GB1 // 4, GB1 // 4),
}

CASES = [
    Case("peer copy 1 GiB cuda:0 -> cuda:1", "a1.copy_(a0)", "a1.copy_(a0)", None, setup=SETUP,
         number=10, repeat=7, sync=True, bytes_moved=GB1),
    Case("peer copy 1 GiB cuda:1 -> cuda:0", "a0.copy_(a1)\npcs.cuda.synchronize(1)",
         "a0.copy_(a1)\ntorch.cuda.synchronize(1)", None, setup=SETUP, number=10, repeat=7,
         sync=True, bytes_moved=GB1),
] if _two_gpus() else []
