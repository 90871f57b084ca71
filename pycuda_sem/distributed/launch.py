"""torch.distributed.launch, the deprecated launcher: the same as run.py, but
each worker gets --local-rank=N on its command line unless --use-env is
given (torchrun's behaviour, where LOCAL_RANK is read from the environment)."""
import sys
import warnings

from . import run as _run

__all__ = ["main"]


def main(argv=None):
    warnings.warn(
        "The module torch.distributed.launch is deprecated\n"
        "and will be removed in future. Use torchrun.\n"
        "Note that --use-env is set by default in torchrun.\n"
        "If your script expects `--local-rank` argument to be set, please\n"
        "change it to read from `os.environ['LOCAL_RANK']` instead. See \n"
        "https://pytorch.org/docs/stable/distributed.html#launch-utility for \n"
        "further instructions\n", FutureWarning, stacklevel=2)
    parser = _run.get_args_parser()
    parser.add_argument("--use-env", "--use_env", dest="use_env", action="store_true",
                        help="Read the local rank from LOCAL_RANK instead of --local-rank.")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    args._pass_local_rank = not args.use_env
    try:
        _run.run(args)
    except _run.ChildFailedError as e:
        print("pycuda_sem.distributed.elastic.multiprocessing.errors.ChildFailedError: "
              + e.format_msg(), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
