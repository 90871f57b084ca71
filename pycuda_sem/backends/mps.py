"""torch.backends.mps: Apple's Metal backend, which this CUDA project does not
have. Scripts probe it to pick a device ('cuda' if ... else 'mps' if ... else
'cpu'); the answers here are the ones torch gives on a machine without it."""


def is_available():
    """False: there is no MPS device here."""
    return False


def is_built():
    """False: this build has no MPS support."""
    return False
