"""pycuda_sem.types: the type aliases of torch.types, for annotations
(``from torch.types import Device``).

pycuda_sem has no symbolic shapes, so the Sym* names are the plain Python
types its sizes are (SymInt is int, ...); there is no dispatch-key enum, so
_dispatchkey is str; there are no quantized tensors, so _qscheme is str
(the scheme's name). Storage names the storage classes a tensor can have.
"""
import os as _os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float  # noqa: F401
from builtins import int as _int, str as _str  # noqa: F401
from collections.abc import Sequence as _Sequence
from typing import IO as _IO, Any as _Any, Union as _Union

from ._C import Size, Tensor, UntypedStorage  # noqa: F401
from ._C import device as _device, dtype as _dtype  # noqa: F401
from ._torch_misc import layout as _layout  # noqa: F401
from ._typed_storage import TypedStorage as _TypedStorage

__all__ = ["Number", "Device", "FileLike", "Storage"]

SymInt = int      # sizes are plain ints here (no symbolic shapes)
SymFloat = float
SymBool = bool
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = _Union[int, float, bool]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
_qscheme = str      # no quantized tensors: a scheme is only a name here
_dispatchkey = str  # no dispatch-key enum here

_TensorOrTensors = _Union[Tensor, _Sequence[Tensor]]
_TensorOrOptionalTensors = _Union[Tensor, _Sequence[_Union[Tensor, None]]]
_TensorOrTensorsOrGradEdge = _Union[Tensor, _Sequence[Tensor], _Any, _Sequence[_Any]]
_size = _Union[Size, list[int], tuple[int, ...]]
_symsize = _Union[Size, _Sequence[int]]

Number = _Union[int, float, bool]
_Number = (int, float, bool)  # a tuple, for isinstance
FileLike = _Union[str, _os.PathLike, _IO[bytes]]
Device = _Union[_device, str, int, None]
Storage = _Union[UntypedStorage, _TypedStorage]
