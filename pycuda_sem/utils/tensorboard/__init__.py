"""torch.utils.tensorboard is not part of pycuda_sem.

torch's SummaryWriter needs the separate `tensorboard` package and writes its
protobuf event files; pycuda_sem does not implement that writer. Importing
this module raises ImportError (the error torch itself gives when
`tensorboard` is missing), so that scripts which guard the import with
`try: ... except ImportError:` fall back as they would under torch, and
scripts that do not are told plainly what is missing.
"""
raise ImportError(
    "pycuda_sem.utils.tensorboard: TensorBoard's SummaryWriter is not implemented by pycuda_sem "
    "(torch's needs the separate 'tensorboard' package); log scalars another way, for example "
    "with the tensorboard package's own writer or a CSV file")
