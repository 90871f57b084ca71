"""pycuda_sem.optim: torch.optim's optimizers and learning-rate schedulers.

SGD, Adam, AdamW, RMSprop and Adagrad follow torch's update rules and keep
torch's state and state_dict format. On CUDA they update all parameters of
a group in a few kernel launches (pycuda_sem._C._fused_adam_ and friends);
see optimizer.py for when the composed, one-tensor-at-a-time form is used.
Adamax, NAdam and RAdam (adam_variants.py) are the one-tensor form only.
swa_utils: weight averaging (SWA, EMA) and the SWA schedule. LBFGS (lbfgs.py):
limited-memory BFGS with an optional strong-Wolfe line search. Adadelta, Rprop
and ASGD (classic.py): the one-tensor form. Adafactor and Muon (adafactor.py):
the one-tensor form; SparseAdam raises NotImplementedError (no sparse tensors).
"""
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401
from .adafactor import Adafactor, Muon, SparseAdam
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .lbfgs import LBFGS
from .classic import Adadelta, Rprop, ASGD
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "LBFGS",
           "Adadelta", "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam",
           "lr_scheduler", "swa_utils"]
