"""torch.func's remaining names: functionalize, linearize and
replace_all_batch_norm_modules_.

functionalize exists in torch to remove mutation and aliasing from a program
before a compiler sees it; pycuda_sem runs eagerly with no compiler, and a
function's results are the same with or without that rewrite, so it returns
the function itself. linearize is built on jvp: the returned jvp_fn runs the
Jacobian-vector product at the fixed primals for each tangent it gets."""
from ._func_transforms import jvp as _jvp

__all__ = ["functionalize", "linearize", "replace_all_batch_norm_modules_"]


def functionalize(func, *, remove="mutations"):
    """func itself: eager calls need no mutation/aliasing removal (see above)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError("functionalize(f, remove='mutations'): received invalid argument for remove=%s. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators "
                           "will be removed from the program, and replaced with their out-of-place "
                           "equivalents.\n     remove='mutations_and_views': In addition to the above, all "
                           "aliasing operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n" % remove)
    return func


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian of func at
    primals times the tangents (one per primal, of the primal's shape)."""
    output = func(*primals)
    output = output.detach() if hasattr(output, "detach") else output

    def jvp_fn(*tangents):
        if len(tangents) != len(primals):
            raise RuntimeError("linearize: jvp_fn expects %d tangents (one per primal), got %d"
                               % (len(primals), len(tangents)))
        return _jvp(func, tuple(primals), tuple(tangents))[1]

    return output, jvp_fn


def replace_all_batch_norm_modules_(root):
    """Turn off running statistics in every batch norm module under root, in
    place (running_mean, running_var, num_batches_tracked become None and
    track_running_stats False, as torch's); returns root."""
    from .nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
