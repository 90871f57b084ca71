"""torchrun: `python -m pycuda_sem.distributed.run [options] script.py args...`

Starts --nproc-per-node workers on this node with the environment of a
static rendezvous (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT and torchelastic's bookkeeping), so that
init_process_group('nccl') with the default env:// finds its peers. On
several nodes, run it on each with the same --nnodes, --master-addr and
--master-port and that node's --node-rank. Elastic membership and restarts
(--max-restarts > 0) are not provided.
"""
import argparse
import os
import socket
import sys
import uuid

from ._agent import ChildFailedError, LocalAgent, WorkerSpec

__all__ = ["get_args_parser", "parse_args", "config_from_args", "run", "main"]


def _both(parser, name, **kwargs):
    """torchrun accepts --foo-bar and --foo_bar for every option."""
    dashed = "--" + name.replace("_", "-")
    under = "--" + name
    parser.add_argument(*dict.fromkeys([dashed, under]), dest=name, **kwargs)


def get_args_parser():
    p = argparse.ArgumentParser(description="Torch Distributed Elastic Training Launcher")
    _both(p, "nnodes", type=str, default="1",
          help="Number of nodes, or MIN_SIZE:MAX_SIZE (only a fixed size is supported).")
    _both(p, "nproc_per_node", type=str, default="1",
          help="Workers per node: an integer, 'gpu' (one per GPU), 'cpu' or 'auto'.")
    _both(p, "node_rank", type=int, default=0, help="Rank of this node (multi-node runs).")
    _both(p, "master_addr", type=str, default="127.0.0.1",
          help="Address of the node of rank 0.")
    _both(p, "master_port", type=int, default=29500, help="Free port on the node of rank 0.")
    p.add_argument("--standalone", action="store_true",
                   help="One node: 127.0.0.1 and a free port (overrides --master-addr/--port).")
    _both(p, "rdzv_backend", type=str, default="static", help="Only 'static' (and c10d when "
          "--standalone) is supported.")
    _both(p, "rdzv_endpoint", type=str, default="", help="HOST[:PORT] of the rendezvous.")
    _both(p, "rdzv_id", type=str, default="none", help="Job id (TORCHELASTIC_RUN_ID).")
    _both(p, "rdzv_conf", type=str, default="", help="Ignored.")
    _both(p, "max_restarts", type=int, default=0, help="Must be 0: restarts are not provided.")
    _both(p, "monitor_interval", type=float, default=0.1, help="Seconds between checks.")
    _both(p, "start_method", type=str, default="spawn", choices=["spawn", "fork", "forkserver"],
          help="Ignored: workers are new interpreters.")
    _both(p, "role", type=str, default="default", help="Ignored.")
    p.add_argument("-m", "--module", action="store_true",
                   help="Run the script as a module (python -m).")
    _both(p, "no_python", action="store_true",
          help="Run the script directly, without 'python'.")
    _both(p, "run_path", action="store_true", help="Run with runpy.run_path in-process (ignored: "
          "a new interpreter is used).")
    _both(p, "log_dir", type=str, default=None, help="Ignored.")
    p.add_argument("training_script", type=str, help="The script (or module with -m).")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nproc(value):
    if value in ("gpu", "auto"):
        from .. import cuda
        n = cuda.device_count()
        if n > 0:
            return n
        if value == "gpu":
            raise ValueError("Cuda is not available.")
        return os.cpu_count() or 1
    if value == "cpu":
        return os.cpu_count() or 1
    try:
        return int(value)
    except ValueError:
        raise ValueError("Unsupported nproc_per_node value: %s" % value) from None


def _nnodes(value):
    lo, _, hi = value.partition(":")
    if hi and hi != lo:
        raise ValueError("elastic ranges of nodes (--nnodes %s) are not supported: give one "
                         "number" % value)
    return int(lo)


def config_from_args(args):
    """A WorkerSpec from parsed arguments."""
    if args.max_restarts:
        raise ValueError("--max-restarts %d: restarts are not supported (use 0)"
                         % args.max_restarts)
    nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    if args.node_rank < 0 or args.node_rank >= nnodes:
        raise ValueError("--node-rank %d is not in [0, %d)" % (args.node_rank, nnodes))
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = (host, int(p)) if host else (p, port)
    run_id = args.rdzv_id
    if args.standalone:
        addr, port, run_id = "127.0.0.1", _free_port(), str(uuid.uuid4())
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print("*" * 49 + "\nSetting OMP_NUM_THREADS environment variable for each process to be "
              "1 in default, to avoid your system being overloaded, please further tune the "
              "variable for optimal performance in your application as needed. \n" + "*" * 49,
              file=sys.stderr)
        os.environ["OMP_NUM_THREADS"] = "1"
    if args.no_python and args.module:
        raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at the "
                         "same time.")
    if args.no_python:
        base = [args.training_script]
    else:
        base = [sys.executable, "-u"] + (["-m"] if args.module else []) + [args.training_script]
    extra = list(args.training_script_args)
    name = getattr(args, "_entrypoint_name", args.training_script)
    return WorkerSpec(lambda local_rank: base + _local_rank_args(args, local_rank) + extra,
                      nproc, nnodes, args.node_rank, addr, port, run_id, 0, name)


def _local_rank_args(args, local_rank):
    # The legacy launcher (launch.py) passes --local-rank unless --use-env.
    return ["--local-rank=%d" % local_rank] if getattr(args, "_pass_local_rank", False) else []


def run(args):
    """Run the workers; raise ChildFailedError when one fails."""
    spec = config_from_args(args)
    code = LocalAgent(spec, args.monitor_interval).run()
    if code:
        sys.exit(code)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args)
    except ChildFailedError as e:
        print("pycuda_sem.distributed.elastic.multiprocessing.errors.ChildFailedError: "
              + e.format_msg(), file=sys.stderr)
        sys.exit(1)
    except ValueError as e:
        print("%s: error: %s" % (os.path.basename(sys.argv[0]) or "run", e), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
