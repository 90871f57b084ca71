"""The specification's best-practices section (device-agnostic code, pinned
memory buffers), run end to end as a training script: tests/
best_practices_train.py selects the device with argparse and --disable-cuda,
moves `Network()` there with `.to(device=args.device)`, iterates a DataLoader
that pins its batches when CUDA is used, copies them with non_blocking=True
and trains a classifier on synthetic data. On the CPU here (in-process, with
worker processes, and as a subprocess the way a user runs it) and on CUDA
under the `cuda` marker: the loss goes down and everything lives where the
note says it does."""
import os
import subprocess
import sys

import pytest

import pycuda_sem as torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import best_practices_train as script  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "best_practices_train.py")
CPU = torch.device("cpu")


def assert_learns(losses, accuracy):
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.9


def test_device_selection():
    assert script.parse_args(["--disable-cuda"]).device == CPU
    expected = torch.device("cuda") if torch.cuda.is_available() else CPU
    assert script.parse_args([]).device == expected


@pytest.mark.parametrize("num_workers", [0, 2])
def test_trains_on_cpu(num_workers):
    args, losses, accuracy, seen = script.main(["--disable-cuda", "--num-workers",
                                                str(num_workers)])
    assert args.device == CPU
    assert seen["empty_device"] == CPU
    assert seen["param_devices"] == {CPU}
    assert seen["batch_devices"] == {CPU}
    assert seen["pinned"] == {False}  # pin_memory only when CUDA is used
    assert_learns(losses, accuracy)


def test_runs_as_a_script():
    out = subprocess.run([sys.executable, SCRIPT, "--disable-cuda", "--epochs", "3"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines[:3]] == ["epoch 0", "epoch 1", "epoch 2"]
    assert lines[-1].startswith("device cpu, training accuracy")


def test_same_result_on_cpu_by_default_without_a_gpu():
    """Without --disable-cuda and without a GPU the script falls back to the
    CPU and trains exactly as with the flag."""
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the default picks it")
    a = script.main(["--disable-cuda", "--epochs", "2"])
    b = script.main(["--epochs", "2"])
    assert a[1] == b[1] and a[2] == b[2]


@pytest.mark.cuda
@pytest.mark.parametrize("num_workers", [0, 2])
def test_trains_on_cuda(num_workers):
    cuda = torch.device("cuda")
    args, losses, accuracy, seen = script.main(["--num-workers", str(num_workers)])
    assert args.device == cuda
    assert seen["empty_device"].type == "cuda"
    assert {d.type for d in seen["param_devices"]} == {"cuda"}
    assert {d.type for d in seen["batch_devices"]} == {"cuda"}
    assert seen["pinned"] == {True}  # the DataLoader's pinning thread
    assert_learns(losses, accuracy)
    # the same script with the flag stays on the CPU even with a GPU present,
    # and learns the same task
    args, cpu_losses, cpu_accuracy, seen = script.main(["--disable-cuda"])
    assert args.device == CPU and seen["param_devices"] == {CPU}
    assert_learns(cpu_losses, cpu_accuracy)
