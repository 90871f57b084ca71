"""pycuda_sem.onnx: the names model code calls while it runs. There is no
exporter: export() raises NotImplementedError (export with torch itself, or
save the state_dict); is_in_onnx_export() is False, so code that checks it
takes its ordinary path."""

__all__ = ["export", "is_in_onnx_export", "dynamo_export"]


def is_in_onnx_export():
    """False: pycuda_sem never traces a model for ONNX."""
    return False


def export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.export is not implemented in pycuda_sem: there is no "
                              "ONNX exporter (save the state_dict and export with torch)")


def dynamo_export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.dynamo_export is not implemented in pycuda_sem: there is "
                              "no ONNX exporter (save the state_dict and export with torch)")
