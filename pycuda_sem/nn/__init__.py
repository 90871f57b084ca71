"""torch.nn: modules, layers, losses, initialisers and their functional forms.

Module and Parameter are in modules/module.py and parameter.py; the layers
in modules/; the stateless maths in functional.py (losses and attention in
the two files it re-exports); init.py, utils/ and parallel/ as in torch."""
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import (  # noqa: F401
    Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Linear,
    Bilinear, ReLU, ReLU6, Hardtanh, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax,
    Softmin, Softplus, ELU, SELU, Mish, LogSigmoid, MultiheadAttention, LayerNorm, RMSNorm,
    Embedding, Dropout, Flatten, Unflatten, L1Loss, MSELoss, SmoothL1Loss, HuberLoss,
    CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, BatchNorm1d, BatchNorm2d,
    BatchNorm3d, GroupNorm, Conv1d, Conv2d, Conv3d, MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d,
    AvgPool2d, AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, RNNBase, RNN, LSTM, GRU, RNNCell,
    LSTMCell, GRUCell, Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer, Dropout1d, Dropout2d, Dropout3d, Upsample, UpsamplingNearest2d,
    UpsamplingBilinear2d, Hardswish, Hardsigmoid, Softsign, Tanhshrink, Threshold, CELU, Softshrink,
    Hardshrink, GLU, PReLU, RReLU, Softmax2d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d, PixelShuffle, PixelUnshuffle, CosineSimilarity,
    PairwiseDistance, MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, CosineEmbeddingLoss,
    TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
    ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Unfold, Fold, SyncBatchNorm,
    AdaptiveAvgPool3d, AdaptiveMaxPool3d, ChannelShuffle, LocalResponseNorm, EmbeddingBag, CTCLoss,
    NLLLoss2d, LinearCrossEntropyLoss,
)
from ._functional_linear_xent import LinearCrossEntropyOptions  # noqa: F401
from .modules.padding import *  # noqa: F401,F403
from .parameter import UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules.lazy import (  # noqa: F401
    LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .modules.extra_layers import (  # noqa: F401
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, AlphaDropout,
    FeatureAlphaDropout, TripletMarginWithDistanceLoss, MultiLabelMarginLoss,
)
from .modules import (  # noqa: F401
    RNNCellBase, FractionalMaxPool2d, FractionalMaxPool3d, CrossMapLRN2d,
    AdaptiveLogSoftmaxWithLoss,
)
from . import modules  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import parallel  # noqa: F401
from . import attention  # noqa: F401 - nn.attention: SDPBackend, sdpa_kernel
from .parallel import DataParallel, DistributedDataParallel  # noqa: F401
