"""torch.save / torch.load in torch's zip format, so checkpoints move both ways.

The archive (uncompressed zip, every record under one folder, "archive/")
holds `data.pkl`, a pickle (protocol 2) of the object in which each tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
hooks)` and each storage a persistent id `('storage', torch.<T>Storage, key,
location, numel)`; the storages' bytes as records `data/<key>`, aligned to 64
bytes as torch aligns them (padding in a zip extra field); and `byteorder`,
`version`, `.format_version`, `.storage_alignment`, `.data/serialization_id`.
The names in the pickle are torch's own, so the file loads in torch; loading
maps them back to this package.

Tensors that view one storage are saved once and share it again after load.
CUDA tensors are copied to the host to be written and return to their device
(or map_location's) on load. requires_grad is saved in the rebuild call and
restored (on a new leaf); an nn.Parameter is written as torch writes it,
`torch._utils._rebuild_parameter(data, requires_grad, hooks)` over a plain
tensor of its data (`_rebuild_parameter_with_state` when it has attributes),
and loads as a Parameter. Other Tensor subclasses, and tensors with
attributes, go through `torch._tensor._rebuild_from_type_v2` as in torch.
Any other object pickles as pickle does: a whole module by reference to its
classes (loadable with weights_only=False only).

load(weights_only=True), the default as in torch 2.6+, resolves only the
names a checkpoint of tensors, Parameters, numbers, strings and containers
needs (torch's weights-only allow-list, trimmed to what this package has); any
other global in the pickle raises pickle.UnpicklingError naming it, before
anything of it runs, unless the user allow-listed it (add_safe_globals, or
the safe_globals context manager, keyed by "module.qualname" as torch keys
them). weights_only=False allows any global (it can run code from the file,
as torch warns). Written in Python like torch's own.
"""
import _compat_pickle
import collections
import io
import os
import pickle
import pickletools
import struct
import zipfile

import numpy as np

from . import _C, _tensor_pickle

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals",
           "clear_safe_globals", "get_unsafe_globals_in_checkpoint", "location_tag",
           "default_restore_location", "normalize_storage_type", "storage_to_tensor_type",
           "skip_data"]

_ALIGN = 64
_PREFIX = "archive"

# torch's storage class names by our dtype name
_STORAGE = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage",
}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE.items()}
# NumPy has no bfloat16: its bytes travel as int16
_NP = {"bfloat16": np.int16}


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


class _Global:
    """A module-level name as the pickle records it (GLOBAL 'module\\nname').
    Callable only so that the pickler accepts it as a reduce function."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise TypeError("%s.%s is a name written into a checkpoint, not a function"
                        % (self.module, self.name))


_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")


def _parameter_class():
    # nn builds on this package's top level; import it when first needed
    from .nn.parameter import Parameter
    return Parameter


def _torch_name_of_class(cls):
    """torch's name for our Tensor and Parameter classes, else None."""
    if cls is _C.Tensor:
        return _Global("torch", "Tensor")
    if cls is _parameter_class():
        return _Global("torch.nn.parameter", "Parameter")
    return None


class _StorageRef:
    """One storage of the saved object: its key, dtype, element count and home."""
    __slots__ = ("key", "dtype", "numel", "location", "base")

    def __init__(self, key, dtype, numel, location, base):
        self.key, self.dtype, self.numel, self.location, self.base = key, dtype, numel, location, base


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, which lets the names be written as torch's."""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, f, protocol):
        super().__init__(f, protocol)
        self.storages = {}

    def _write_global(self, g):
        self.write(pickle.GLOBAL + (g.module + "\n" + g.name + "\n").encode("utf-8"))

    def _save_marker(self, obj):
        self._write_global(obj)

    def _save_dtype(self, obj):
        self._write_global(_Global("torch", _dtype_name(obj)))

    dispatch[_Global] = _save_marker
    dispatch[_C.dtype] = _save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", _STORAGE[obj.dtype]), obj.key, obj.location,
                    obj.numel)
        return None

    def save_global(self, obj, name=None):
        # the tensor classes by torch's names, as torch writes them (a type
        # passed to _rebuild_from_type_v2); every other class by its own
        named = _torch_name_of_class(obj) if isinstance(obj, type) else None
        if named is None:
            return super().save_global(obj, name)
        self._write_global(named)
        self.memoize(obj)

    def reducer_override(self, obj):
        if isinstance(obj, _C.Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, _C.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return _Global("torch", "device"), args
        if isinstance(obj, _C.Size):
            return _Global("torch", "Size"), (list(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        """What torch's Tensor.__reduce_ex__ / Parameter.__reduce_ex__ give t:
        a Parameter is _rebuild_parameter over its data (a plain tensor,
        reduced by the next call), a tensor _rebuild_tensor_v2 over its
        storage; a subclass or a tensor with attributes goes through
        _rebuild_from_type_v2 with its type and state."""
        hooks = collections.OrderedDict()  # torch never saves backward hooks
        state = _tensor_pickle._get_state(t)
        if isinstance(t, _parameter_class()):
            args = (t.data, t.requires_grad, hooks)
            if state:
                return _REBUILD_PARAMETER_WITH_STATE, args + (state,)
            return _REBUILD_PARAMETER, args
        args = (self._storage_of(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                t.requires_grad, hooks)
        if type(t) is _C.Tensor and not state:
            return _REBUILD, args
        return _REBUILD_FROM_TYPE, (_REBUILD, type(t), args, state)

    def _storage_of(self, t):
        st = t.untyped_storage()
        dt = _dtype_name(t.dtype)
        ident = (st.data_ptr(), st.nbytes(), str(t.device)) if st.data_ptr() else ("empty", id(t))
        ref = self.storages.get(ident)
        if ref is not None:
            if ref.dtype != dt:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                                   "data as different types")
            return ref
        numel = st.nbytes() // t.element_size()
        t = t.detach()
        base = t.as_strided((numel,), (1,), 0) if numel else t.new_empty(0)
        location = "cpu" if t.device.type == "cpu" else "cuda:%d" % t.device.index
        ref = _StorageRef(str(len(self.storages)), dt, numel, location, base)
        self.storages[ident] = ref
        return ref


def _storage_bytes(ref):
    base = ref.base
    if ref.dtype in ("float16", "bfloat16"):
        base = base.view(_C.int16)
    return base.cpu().numpy().tobytes()


def _write_record(zf, name, data):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    # The record's bytes start after the 30-byte local header, the name and
    # the extra field (plus a zip64 field zipfile adds for big records): pad
    # the extra field so that they start on a multiple of 64, as torch does.
    start = zf.fp.tell() + 30 + len(name.encode("utf-8")) + 4
    if len(data) * 1.05 > zipfile.ZIP64_LIMIT:
        start += 20
    pad = -start % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # 'FB', torch's padding id
    zf.writestr(info, data)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save obj (tensors, and dicts, lists, tuples, numbers and strings of
    them) to f (a path or a binary file) in torch's zip format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("pycuda_sem writes only torch's zip format "
                                  "(_use_new_zipfile_serialization=False is not supported)")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("save(): only the standard pickle module is supported")
    buf = io.BytesIO()
    p = _Pickler(buf, pickle_protocol)
    p.dump(obj)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, _PREFIX + "/data.pkl", buf.getvalue())
        _write_record(zf, _PREFIX + "/.format_version", b"1")
        _write_record(zf, _PREFIX + "/.storage_alignment", b"64")
        if not _disable_byteorder_record:
            _write_record(zf, _PREFIX + "/byteorder", b"little")
        for ref in p.storages.values():
            _write_record(zf, "%s/data/%s" % (_PREFIX, ref.key), _storage_bytes(ref))
        _write_record(zf, _PREFIX + "/version", b"3\n")
        sid = "".join("%010d" % (os.getpid() + i) for i in range(4))[:40]
        _write_record(zf, _PREFIX + "/.data/serialization_id", sid.encode())
    data = out.getvalue()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


# ---- load --------------------------------------------------------------------------------

class _StorageType:
    """What torch.<T>Storage resolves to on load: its dtype."""
    def __init__(self, dtype):
        self.dtype = dtype


class LoadedStorage:
    """A loaded storage handed to a map_location function: a 1-D tensor of
    its elements. `.cpu()` and `.cuda(device=None)` move it."""
    def __init__(self, tensor):
        self.tensor = tensor

    @property
    def device(self):
        return self.tensor.device

    def cpu(self):
        return LoadedStorage(self.tensor.cpu())

    def cuda(self, device=None, non_blocking=False):
        return LoadedStorage(self.tensor.cuda(device, non_blocking=non_blocking))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """torch._utils._rebuild_tensor_v2: a leaf viewing the loaded storage.
    (backward_hooks: torch saves none and ignores them; so do we.)"""
    if not isinstance(storage, LoadedStorage):
        raise pickle.UnpicklingError("load(): _rebuild_tensor_v2 expects a storage, got %s"
                                     % type(storage).__name__)
    t = storage.tensor.as_strided(tuple(size), tuple(stride), storage_offset)
    if requires_grad:
        t.requires_grad_()
    return t


def _check_tensor(data, fname):
    if not isinstance(data, _C.Tensor):
        raise pickle.UnpicklingError("load(): %s expects a tensor, got %s"
                                     % (fname, type(data).__name__))


def _rebuild_parameter(data, requires_grad, backward_hooks, *args):
    """torch._utils._rebuild_parameter: an nn.Parameter over data's memory."""
    _check_tensor(data, "_rebuild_parameter")
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: the Parameter, then its
    attributes."""
    return _tensor_pickle._set_state(_rebuild_parameter(data, requires_grad, backward_hooks),
                                     state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: func(*args) as new_type (a Tensor
    subclass), with state."""
    if not isinstance(new_type, type) or not issubclass(new_type, _C.Tensor):
        raise pickle.UnpicklingError("load(): _rebuild_from_type_v2 expects a Tensor "
                                     "subclass, got %r" % (new_type,))
    return _tensor_pickle._rebuild_from_type_v2(func, new_type, args, state)


def _cuda_available():
    from . import cuda
    return cuda.is_available()


def _cuda_required(location):
    raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                       "torch.cuda.is_available() is False. If you are running on a CPU-only "
                       "machine, please use torch.load with map_location=torch.device('cpu') to "
                       "map your storages to the CPU. (location: %s)" % location)


def _place(tensor, location, map_location):
    """The device a storage saved at `location` goes to."""
    if map_location is None:
        target = location
    elif callable(map_location) and not isinstance(map_location, (str, _C.device, dict)):
        moved = map_location(LoadedStorage(tensor), location)
        if moved is None:
            return _place(tensor, location, None)
        return moved.tensor if isinstance(moved, LoadedStorage) else moved
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    else:
        target = str(map_location)
    dev = _C.device(target)
    if dev.type == "cuda" and not _cuda_available():
        _cuda_required(location)
    return tensor if dev.type == "cpu" else tensor.to(dev)


# The globals load(weights_only=True) resolves by default: what a checkpoint
# of tensors, Parameters, numbers, strings and containers names.
_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Size"): _C.Size,
    ("torch", "device"): _C.device,
    ("torch", "Tensor"): _C.Tensor,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex, ("builtins", "slice"): slice,
    ("builtins", "bytearray"): bytearray, ("builtins", "range"): range,
}


def _py3_name(module, name):
    """Protocol 2 pickles (torch.save's default) name builtins by their
    Python 2 names (__builtin__.set): map them as pickle's own find_class
    does, before any allow-list sees them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    if module in _compat_pickle.IMPORT_MAPPING:
        return _compat_pickle.IMPORT_MAPPING[module], name
    return module, name


def _default_global(module, name):
    """What a default-allowed global resolves to; None for the others."""
    if (module, name) in _SAFE:
        return _SAFE[(module, name)]
    if (module, name) == ("torch.nn.parameter", "Parameter"):
        return _parameter_class()
    if module == "torch" and name in _DTYPE_OF_STORAGE:
        return _StorageType(_DTYPE_OF_STORAGE[name])
    if module == "torch" and isinstance(getattr(_C, name, None), _C.dtype):
        return getattr(_C, name)
    if module == "_codecs" and name == "encode":  # bytes, in pickle protocol 2
        import codecs
        return codecs.encode
    return None


class _Unpickler(pickle.Unpickler):
    SAFE = _SAFE

    def __init__(self, f, zf, prefix, map_location, weights_only):
        super().__init__(f)
        self.zf, self.prefix, self.map_location = zf, prefix, map_location
        self.weights_only, self.loaded = weights_only, {}

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        obj = _default_global(module, name)
        if obj is not None:
            return obj
        if self.weights_only:
            obj = _user_allowed_globals().get("%s.%s" % (module, name))
            if obj is not None:
                return obj
            raise pickle.UnpicklingError(
                "Weights only load failed: the checkpoint asks for the global %s.%s, which "
                "load(weights_only=True) does not allow (only tensors, Parameters, numbers, "
                "strings and containers load). If you trust it, allow-list it with "
                "torch.serialization.add_safe_globals([%s]) or the "
                "torch.serialization.safe_globals([%s]) context manager; pass "
                "weights_only=False only for a file you trust: it can run code."
                % (module, name, name, name))
        if module.startswith("torch"):
            module = "pycuda_sem" + module[len("torch"):]
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError("load(): unknown persistent id %r" % (pid,))
        _, stype, key, location, numel = pid
        if key not in self.loaded:
            raw = self.zf.read("%s/data/%s" % (self.prefix, key))
            name = stype.dtype
            npdt = _NP[name] if name in _NP else np.dtype(name)
            arr = np.frombuffer(raw, dtype=npdt, count=int(numel)).copy()
            t = _C.from_numpy(arr)
            if name == "bfloat16":
                t = t.view(_C.bfloat16)
            self.loaded[key] = LoadedStorage(_place(t, str(location), self.map_location))
        return self.loaded[key]


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by save() here or by torch.save (zip format)."""
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("load(): only the standard pickle module is supported")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    # mmap=True: the file is read like any other (the storages are copies,
    # not views of a mapping); what loads is the same
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise NotImplementedError("load(): the file is not in torch's zip format (the legacy "
                                  "pre-1.6 format is not supported)")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        prefix = names[0].split("/", 1)[0]
        pkl = prefix + "/data.pkl"
        if pkl not in names:
            raise RuntimeError("load(): the archive has no data.pkl record")
        order = zf.read(prefix + "/byteorder") if prefix + "/byteorder" in names else b"little"
        if order != b"little":
            raise NotImplementedError("load(): big-endian checkpoints are not supported")
        up = _Unpickler(io.BytesIO(zf.read(pkl)), zf, prefix, map_location, weights_only)
        return up.load()


# ---- the user's allow-list for weights_only=True ------------------------------------------

# functions/classes, or (object, "module.name") pairs naming the global the
# checkpoint spells (for an object saved under another name)
_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Allow-list these functions/classes (or (object, "module.name") pairs)
    for load(weights_only=True): a checkpoint naming one of them loads it."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def get_safe_globals():
    """The user's allow-list, as a list."""
    return list(_marked_safe_globals)


def clear_safe_globals():
    """Empty the user's allow-list."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """Context manager: add_safe_globals(safe_globals) for the block, and
    those entries taken out of the allow-list again after it."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc_value, tb):
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals():
    """{"module.qualname": object} of the allow-list. An object of this
    package is also found under torch's spelling of its name
    ("pycuda_sem.x.Y" as "torch.x.Y"), since checkpoints made by torch
    name it so."""
    allowed = {}
    for entry in _marked_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 "path), but got tuple of length: %d" % len(entry))
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                "but got: %s" % type(entry[1]))
            obj, key = entry
        else:
            obj, key = entry, "%s.%s" % (entry.__module__, entry.__qualname__)
        allowed[key] = obj
        if key.startswith("pycuda_sem."):
            allowed.setdefault("torch." + key[len("pycuda_sem."):], obj)
    return allowed


def _read_archive(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    return f.read()


def _pickle_globals(data):
    """The "module.name" of every global a pickle names (GLOBAL, and
    STACK_GLOBAL from the two strings pushed before it), read statically."""
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            module, name = _py3_name(*arg.split(" ", 1))
            found.add("%s.%s" % (module, name))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            module, name = _py3_name(strings[-2], strings[-1])
            found.add("%s.%s" % (module, name))
        elif isinstance(arg, str) and "UNICODE" in op.name:
            strings.append(arg)
    return found


def get_unsafe_globals_in_checkpoint(f):
    """The globals of a checkpoint (path or binary file) that
    load(weights_only=True) would refuse: neither allowed by default nor
    on the user's allow-list. Read statically; nothing runs."""
    data = _read_archive(f)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        pkl = names[0].split("/", 1)[0] + "/data.pkl"
        if pkl not in names:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        found = _pickle_globals(zf.read(pkl))
    user = _user_allowed_globals()
    return [g for g in found
            if g not in user and _default_global(*g.rsplit(".", 1)) is None]


# ---- storage locations ---------------------------------------------------------------------

def location_tag(storage):
    """Where a storage (or tensor, or loaded storage) lives, as save()
    records it: 'cpu' or 'cuda:<index>'."""
    dev = storage.device  # AttributeError for other objects, as torch
    if not isinstance(dev, _C.device):
        dev = _C.device(dev)
    if dev.type == "cpu":
        return "cpu"
    if dev.type == "cuda":
        return "cuda:%d" % (dev.index or 0)
    raise RuntimeError("don't know how to determine data location of %s"
                       % type(storage).__qualname__)


def default_restore_location(storage, location):
    """The storage moved to `location` ('cpu', 'cuda' or 'cuda:<i>'), as
    load() places storages without map_location. The storage must offer
    .cpu()/.cuda(device) (what a map_location function is handed) unless
    it is already there."""
    if location.startswith("cpu"):
        target = _C.device("cpu")
    elif location.startswith("cuda"):
        if not _cuda_available():
            _cuda_required(location)
        target = _C.device(location)
        from . import cuda
        index = target.index or 0
        if index >= cuda.device_count():
            raise RuntimeError("Attempting to deserialize object on CUDA device %d but "
                               "torch.cuda.device_count() is %d. Please use torch.load with "
                               "map_location to map your storages to an existing device."
                               % (index, cuda.device_count()))
        target = _C.device("cuda", index)
    else:
        raise RuntimeError("don't know how to restore data location of %s (tagged with %s)"
                           % (_typename(storage), location))
    here = storage.device if isinstance(storage.device, _C.device) else _C.device(storage.device)
    if here == target:
        return storage
    mover = getattr(storage, "cpu" if target.type == "cpu" else "cuda", None)
    if mover is None:
        raise NotImplementedError("default_restore_location: a %s cannot move between devices "
                                  "here" % _typename(storage))
    return mover() if target.type == "cpu" else mover(target.index)


def _typename(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__qualname__)


def normalize_storage_type(storage_type):
    """The package's own class of that name (TypedStorage, UntypedStorage)."""
    import pycuda_sem
    return getattr(pycuda_sem, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type named after a storage's class (FloatStorage ->
    FloatTensor in its module), as torch; TypedStorage and UntypedStorage
    have none, so AttributeError for them, as in torch."""
    import importlib
    module = importlib.import_module(type(storage).__module__)
    return getattr(module, type(storage).__name__.replace("Storage", "Tensor"))


class skip_data:
    """torch's context manager that saves/loads without the storages' bytes:
    not implemented here (NotImplementedError on construction)."""

    def __init__(self, materialize_fake_tensors=False):
        raise NotImplementedError("torch.serialization.skip_data is not implemented in "
                                  "pycuda_sem: save() always writes the storages' bytes")
