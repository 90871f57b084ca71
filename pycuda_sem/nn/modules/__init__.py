"""torch.nn.modules: the Module base class, containers and layers."""
from .module import Module  # noqa: F401
from .container import (  # noqa: F401
    Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from .linear import Identity, Linear, Bilinear  # noqa: F401
from .activation import (  # noqa: F401
    ReLU, ReLU6, Hardtanh, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, Softmin,
    Softplus, ELU, SELU, Mish, LogSigmoid, MultiheadAttention, Hardswish, Hardsigmoid, Softsign,
    Tanhshrink, Threshold, CELU, Softshrink, Hardshrink, GLU, PReLU, RReLU, Softmax2d,
)
from .layers import (  # noqa: F401
    LayerNorm, RMSNorm, Embedding, Dropout, Dropout1d, Dropout2d, Dropout3d, Upsample,
    UpsamplingNearest2d, UpsamplingBilinear2d, Flatten, Unflatten,
)
from .batchnorm import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
    InstanceNorm3d, SyncBatchNorm,
)
from .conv import (  # noqa: F401
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, MaxPool1d,
    MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, PixelShuffle,
    PixelUnshuffle, Unfold, Fold, AdaptiveAvgPool3d, AdaptiveMaxPool3d, ChannelShuffle, LocalResponseNorm,
)
from .layers import EmbeddingBag  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .padding import *  # noqa: F401,F403
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell, RNNCellBase  # noqa: F401
from .extra_layers3 import (  # noqa: F401
    FractionalMaxPool2d, FractionalMaxPool3d, CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss,
)
from .transformer import (  # noqa: F401
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
    TransformerDecoderLayer,
)
from .loss import (  # noqa: F401
    L1Loss, MSELoss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, BCELoss,
    BCEWithLogitsLoss, KLDivLoss, MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss,
    CosineEmbeddingLoss, TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, CTCLoss, NLLLoss2d, LinearCrossEntropyLoss,
)
from .extra_layers import (  # noqa: F401
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, AlphaDropout,
    FeatureAlphaDropout, TripletMarginWithDistanceLoss, MultiLabelMarginLoss,
)
from .lazy import (  # noqa: F401
    LazyModuleMixin, LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
    LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
    LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
