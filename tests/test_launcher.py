"""The launcher, `python -m pycuda_sem.distributed.run` and the legacy
`launch` (CPU tests): torchrun's environment in every worker, the NVLink
multicast switches passed on, a failing rank stopping the others with its
error in the summary, signals forwarded."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVLS = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1"}
KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
        "MASTER_PORT", "TORCHELASTIC_RUN_ID"] + list(NVLS)

# one write() per record: the workers share the launcher's stdout, and with
# PYTHONUNBUFFERED print's text and newline would be two writes that another
# worker's record can land between
PRINT_ENV = """
import json, os, sys
sys.stdout.write(json.dumps({"env": {k: os.environ.get(k) for k in %r}, "argv": sys.argv[1:]}) + "\\n")
sys.stdout.flush()
""" % KEYS


def _launch(tmp_path, args, script=PRINT_ENV, module="run", timeout=60, env_extra=None):
    path = tmp_path / "worker.py"
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + str(tmp_path), **NVLS, **(env_extra or {}))
    cmd = [sys.executable, "-m", "pycuda_sem.distributed." + module] + args
    cmd = [a.replace("SCRIPT", str(path)) for a in cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def _records(stdout):
    return sorted((json.loads(line) for line in stdout.splitlines() if line.startswith("{")),
                  key=lambda r: int(r["env"]["RANK"]))


def test_three_workers_get_torchrun_env(tmp_path):
    r = _launch(tmp_path, ["--standalone", "--nproc-per-node", "3", "SCRIPT", "--lr", "0.1"])
    assert r.returncode == 0, r.stderr
    recs = _records(r.stdout)
    assert [x["env"]["RANK"] for x in recs] == ["0", "1", "2"]
    ports = {x["env"]["MASTER_PORT"] for x in recs}
    assert len(ports) == 1 and ports != {"29500"}  # standalone: one free port for all
    for i, x in enumerate(recs):
        env = x["env"]
        assert env["LOCAL_RANK"] == str(i) and env["WORLD_SIZE"] == "3"
        assert env["LOCAL_WORLD_SIZE"] == "3" and env["GROUP_RANK"] == "0"
        assert env["MASTER_ADDR"] == "127.0.0.1" and env["TORCHELASTIC_RUN_ID"]
        assert {k: env[k] for k in NVLS} == NVLS  # never unset, passed to every worker
        assert x["argv"] == ["--lr", "0.1"]


def test_second_node_ranks_and_underscore_spelling(tmp_path):
    r = _launch(tmp_path, ["--nnodes=2", "--node_rank=1", "--nproc_per_node=2",
                           "--master_addr=10.0.0.1", "--master_port=1234", "SCRIPT"])
    assert r.returncode == 0, r.stderr
    envs = [x["env"] for x in _records(r.stdout)]
    assert [(e["RANK"], e["LOCAL_RANK"], e["GROUP_RANK"]) for e in envs] == [("2", "0", "1"),
                                                                          ("3", "1", "1")]
    assert {(e["WORLD_SIZE"], e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs} == {
        ("4", "10.0.0.1", "1234")}


def test_module_mode(tmp_path):
    r = _launch(tmp_path, ["--nproc-per-node", "2", "-m", "worker", "x"])
    assert r.returncode == 0, r.stderr
    assert [x["argv"] for x in _records(r.stdout)] == [["x"], ["x"]]


def test_legacy_launch_passes_local_rank(tmp_path):
    r = _launch(tmp_path, ["--nproc_per_node=2", "--master_port=29511", "SCRIPT"], module="launch")
    assert r.returncode == 0, r.stderr
    assert "torch.distributed.launch is deprecated" in r.stderr
    assert [x["argv"] for x in _records(r.stdout)] == [["--local-rank=0"], ["--local-rank=1"]]
    r = _launch(tmp_path, ["--nproc_per_node=1", "--use-env", "SCRIPT"], module="launch")
    assert _records(r.stdout)[0]["argv"] == []


FAIL_RANK_1 = """
import os, sys, time
if os.environ["RANK"] == "1":
    time.sleep(0.2)
    raise ValueError("rank one cannot go on")
time.sleep(60)
"""


def test_failing_rank_stops_the_others(tmp_path):
    start = time.monotonic()
    r = _launch(tmp_path, ["--standalone", "--nproc-per-node", "3", "SCRIPT"], script=FAIL_RANK_1)
    assert time.monotonic() - start < 30  # the sleeping ranks were stopped
    assert r.returncode != 0
    assert "ChildFailedError" in r.stderr and "worker.py FAILED" in r.stderr
    summary = r.stderr.split("Root Cause")[1]
    assert "rank      : 1 (local_rank: 1)" in summary and "exitcode  : 1" in summary
    assert "ValueError: rank one cannot go on" in summary


SIGNALS = """
import os, signal, sys, time
def on_term(signum, frame):
    os.write(1, b"rank %s got signal %d\\n" % (os.environ["RANK"].encode(), signum))
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
os.write(1, b"ready\\n")  # one write: the workers share the pipe
time.sleep(60)
"""


def test_sigterm_is_forwarded(tmp_path):
    path = tmp_path / "worker.py"
    path.write_text(SIGNALS)
    p = subprocess.Popen([sys.executable, "-m", "pycuda_sem.distributed.run", "--standalone",
                          "--nproc-per-node", "2", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    try:
        assert [p.stdout.readline().strip() for _ in range(2)] == ["ready", "ready"]
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert sorted(out.splitlines()) == ["rank 0 got signal 15", "rank 1 got signal 15"]
    assert p.returncode == 128 + signal.SIGTERM and "SIGTERM death signal" in err


def test_bad_arguments(tmp_path):
    r = _launch(tmp_path, ["--nnodes", "1:4", "SCRIPT"])
    assert r.returncode != 0 and "elastic ranges" in r.stderr
    r = _launch(tmp_path, ["--max-restarts", "3", "SCRIPT"])
    assert r.returncode != 0 and "restarts are not supported" in r.stderr


@pytest.mark.parametrize("flag", ["--nproc-per-node", "--nproc_per_node"])
def test_both_spellings_parse(flag):
    from pycuda_sem.distributed import run
    args = run.parse_args([flag, "4", "--standalone", "train.py", "--epochs", "2"])
    assert args.nproc_per_node == "4" and args.standalone
    assert args.training_script == "train.py" and args.training_script_args == ["--epochs", "2"]
