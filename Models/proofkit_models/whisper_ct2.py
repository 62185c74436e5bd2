"""Reads a CTranslate2 `model.bin` (binary version 6) into numpy arrays, without CTranslate2.

The layout, as CTranslate2's `ModelSpec._serialize` writes it (all little-endian):

    uint32 binary_version                  (6)
    string spec name                       ("WhisperSpec")
    uint32 spec revision                   (3)
    uint32 number of variables
    per variable:
        string name                        (e.g. "encoder/conv1/weight")
        uint8  rank, then rank x uint32 dimensions
        uint8  dtype                       (0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16)
        uint32 byte count, then the raw data
    uint32 number of aliases
    per alias: string alias, string target (e.g. "decoder/projection/weight" -> "decoder/embeddings/weight")

A string is a uint16 length that counts a trailing NUL, then the bytes and the NUL.
Aliases resolve to the same array. Floating-point data is widened to float32 (`read(..., widen=True)`).
"""
from __future__ import annotations

import struct

import numpy as np

DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
# 5 is bfloat16: not used by the Whisper models proofkit reads; refused with a message.


class ModelBinError(ValueError):
    pass


class ModelBin:
    """The variables of one model.bin: `names` in file order, `arrays` (name -> ndarray, float32 when
    widened), `dtypes` (name -> the stored dtype's name), `aliases` (alias -> target)."""

    def __init__(self, version: int, spec: str, revision: int, arrays: dict, dtypes: dict, aliases: dict):
        self.version, self.spec, self.revision = version, spec, revision
        self.arrays, self.dtypes, self.aliases = arrays, dtypes, aliases
        self.names = list(arrays)

    def __getitem__(self, name: str) -> np.ndarray:
        name = self.aliases.get(name, name)
        if name not in self.arrays:
            raise KeyError(f"model.bin has no variable {name!r}")
        return self.arrays[name]

    def __contains__(self, name: str) -> bool:
        return self.aliases.get(name, name) in self.arrays

    def table(self) -> str:
        """One line per variable: name, shape, stored dtype (and the aliases at the end)."""
        lines = [f"{n}\t{list(self.arrays[n].shape)}\t{self.dtypes[n]}" for n in self.names]
        lines += [f"{a} -> {t}\talias" for a, t in self.aliases.items()]
        return "\n".join(lines)


def parse(data: bytes | memoryview, widen: bool = True) -> ModelBin:
    """Parses model.bin's bytes. With `widen`, float16 variables become float32 (exactly: every
    float16 is a float32). Raises ModelBinError on a truncated or unknown file."""
    mv = memoryview(data)
    pos = 0

    def take(n: int) -> memoryview:
        nonlocal pos
        if pos + n > len(mv):
            raise ModelBinError(f"model.bin is truncated at byte {pos} (needs {n} more)")
        out = mv[pos:pos + n]
        pos += n
        return out

    def u8() -> int:
        return take(1)[0]

    def u16() -> int:
        return struct.unpack("<H", take(2))[0]

    def u32() -> int:
        return struct.unpack("<I", take(4))[0]

    def string() -> str:
        n = u16()
        raw = bytes(take(n))
        if not raw.endswith(b"\0"):
            raise ModelBinError(f"model.bin: a name at byte {pos - n} does not end with NUL")
        return raw[:-1].decode("utf-8")

    version = u32()
    if version != 6:
        raise ModelBinError(f"model.bin has binary version {version}; this reader knows version 6")
    spec = string()
    revision = u32()
    count = u32()
    arrays, dtypes = {}, {}
    for _ in range(count):
        name = string()
        rank = u8()
        shape = tuple(u32() for _ in range(rank))
        type_id = u8()
        nbytes = u32()
        if type_id not in DTYPES:
            raise ModelBinError(f"model.bin: {name} has dtype id {type_id}, not supported")
        dt = np.dtype(DTYPES[type_id]).newbyteorder("<")
        want = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if nbytes != want:
            raise ModelBinError(f"model.bin: {name} {shape} holds {nbytes} bytes, expected {want}")
        a = np.frombuffer(take(nbytes), dtype=dt).reshape(shape)
        dtypes[name] = dt.name
        if widen and a.dtype.kind == "f":
            a = a.astype(np.float32)
        arrays[name] = a
    aliases = {}
    for _ in range(u32()):
        alias = string()
        aliases[alias] = string()
    for a, t in aliases.items():
        if t not in arrays:
            raise ModelBinError(f"model.bin: alias {a} points to unknown {t}")
    if pos != len(mv):
        raise ModelBinError(f"model.bin has {len(mv) - pos} trailing bytes")
    return ModelBin(version, spec, revision, arrays, dtypes, aliases)


def read(path: str, widen: bool = True) -> ModelBin:
    with open(path, "rb") as f:
        return parse(f.read(), widen)


if __name__ == "__main__":
    # python -m proofkit_models.whisper_ct2 model.bin: the variable table (name, shape, stored dtype).
    import sys
    mb = read(sys.argv[1], widen=False)
    print(f"binary version {mb.version}, spec {mb.spec} revision {mb.revision}, {len(mb.names)} variables")
    print(mb.table())
