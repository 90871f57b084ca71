"""torch.nn.utils.parametrizations: not implemented here yet (the
parametrize machinery that swaps a module's class for one with a property
per parametrized tensor). The hook-based forms of the two common ones are:
torch.nn.utils.weight_norm and torch.nn.utils.spectral_norm."""


def _missing(name, instead):
    def fn(*args, **kwargs):
        raise NotImplementedError("torch.nn.utils.parametrizations.%s is not implemented in pycuda_sem; "
                                  "%s" % (name, instead))
    fn.__name__ = name
    return fn


weight_norm = _missing("weight_norm", "torch.nn.utils.weight_norm gives the same reparameterisation "
                                      "(state dict keys weight_g and weight_v)")
spectral_norm = _missing("spectral_norm", "torch.nn.utils.spectral_norm gives the same normalisation "
                                          "(state dict keys weight_orig, weight_u, weight_v)")
orthogonal = _missing("orthogonal", "there is no hook-based form")
