"""Reads a TFLite flatbuffer into plain Python objects (numpy arrays for constant tensors),
through the generated schema reader of the PyPI package `tflite` (pure Python). No TensorFlow.

Only what the BlazePose converter (blazepose.py) needs: one subgraph, its tensors (name, shape,
type, constant data, sparsity), its operators (builtin name, inputs, outputs and the options of
the operators listed in OPTIONS) and the model's metadata entries (name -> raw bytes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DTYPES = {  # tflite.TensorType -> numpy (little-endian)
    0: np.dtype("<f4"),  # FLOAT32
    1: np.dtype("<f2"),  # FLOAT16
    2: np.dtype("<i4"),  # INT32
    3: np.dtype("u1"),   # UINT8
    4: np.dtype("<i8"),  # INT64
    9: np.dtype("i1"),   # INT8
}
ACTIVATIONS = {0: None, 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH"}
PADDINGS = {0: "SAME", 1: "VALID"}


@dataclass
class Sparsity:
    traversal_order: list[int]
    block_map: list[int]
    # per traversed dimension: ("dense", size, None, None) or ("csr", 0, segments, indices)
    dims: list[tuple]


@dataclass
class Tensor:
    index: int
    name: str
    shape: list[int]
    dtype: np.dtype
    data: np.ndarray | None  # constant tensors only (sparse ones: the stored values, flat)
    sparsity: Sparsity | None = None


@dataclass
class Operator:
    op: str
    inputs: list[int]
    outputs: list[int]
    options: dict = field(default_factory=dict)


@dataclass
class Graph:
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: list[int]
    outputs: list[int]
    metadata: dict[str, bytes]
    version: int


def _vector(union_type: int, table) -> np.ndarray:
    """A SparseIndexVector union (1 Int32Vector, 2 Uint16Vector, 3 Uint8Vector) as int64."""
    import tflite
    cls = {1: tflite.Int32Vector, 2: tflite.Uint16Vector, 3: tflite.Uint8Vector}.get(union_type)
    if cls is None:
        raise ValueError(f"sparse index vector of type {union_type}")
    v = cls()
    v.Init(table.Bytes, table.Pos)
    return v.ValuesAsNumpy().astype(np.int64)


def _options(name: str, op) -> dict:
    import tflite
    table = op.BuiltinOptions()
    if table is None:
        return {}
    def make(cls):
        o = cls()
        o.Init(table.Bytes, table.Pos)
        return o
    if name == "CONV_2D":
        o = make(tflite.Conv2DOptions)
        return {"padding": PADDINGS[o.Padding()], "stride": (o.StrideH(), o.StrideW()),
                "dilation": (o.DilationHFactor(), o.DilationWFactor()),
                "activation": ACTIVATIONS[o.FusedActivationFunction()]}
    if name == "DEPTHWISE_CONV_2D":
        o = make(tflite.DepthwiseConv2DOptions)
        return {"padding": PADDINGS[o.Padding()], "stride": (o.StrideH(), o.StrideW()),
                "dilation": (o.DilationHFactor(), o.DilationWFactor()),
                "depth_multiplier": o.DepthMultiplier(),
                "activation": ACTIVATIONS[o.FusedActivationFunction()]}
    if name in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        o = make(tflite.Pool2DOptions)
        return {"padding": PADDINGS[o.Padding()], "stride": (o.StrideH(), o.StrideW()),
                "filter": (o.FilterHeight(), o.FilterWidth()),
                "activation": ACTIVATIONS[o.FusedActivationFunction()]}
    if name == "ADD":
        o = make(tflite.AddOptions)
        return {"activation": ACTIVATIONS[o.FusedActivationFunction()]}
    if name == "CONCATENATION":
        o = make(tflite.ConcatenationOptions)
        return {"axis": o.Axis(), "activation": ACTIVATIONS[o.FusedActivationFunction()]}
    if name == "RESHAPE":
        o = make(tflite.ReshapeOptions)
        return {"new_shape": o.NewShapeAsNumpy().tolist() if o.NewShapeLength() else None}
    if name == "RESIZE_BILINEAR":
        o = make(tflite.ResizeBilinearOptions)
        return {"align_corners": bool(o.AlignCorners()), "half_pixel_centers": bool(o.HalfPixelCenters())}
    if name == "DEPTH_TO_SPACE":
        o = make(tflite.DepthToSpaceOptions)
        return {"block_size": o.BlockSize()}
    return {}


def read(data: bytes) -> Graph:
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator
    op_names = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(data, 0)
    if m.SubgraphsLength() != 1:
        raise ValueError(f"{m.SubgraphsLength()} subgraphs; expected 1")
    g = m.Subgraphs(0)
    metadata = {}
    for i in range(m.MetadataLength()):
        md = m.Metadata(i)
        b = m.Buffers(md.Buffer())
        metadata[md.Name().decode()] = b.DataAsNumpy().tobytes() if b.DataLength() else b""
    tensors = []
    for i in range(g.TensorsLength()):
        t = g.Tensors(i)
        if t.Type() not in DTYPES:
            raise ValueError(f"tensor {t.Name()!r}: type {t.Type()}")
        dtype = DTYPES[t.Type()]
        shape = t.ShapeAsNumpy().tolist() if t.ShapeLength() else []
        buf = m.Buffers(t.Buffer())
        arr = None
        if buf is not None and buf.DataLength():
            arr = np.frombuffer(buf.DataAsNumpy().tobytes(), dtype=dtype).copy()
        q = t.Quantization()
        if q is not None and (q.ScaleLength() or q.ZeroPointLength()):
            raise ValueError(f"tensor {t.Name()!r} is quantised; only float models are handled")
        sp = None
        s = t.Sparsity()
        if s is not None:
            dims = []
            for d in range(s.DimMetadataLength()):
                dm = s.DimMetadata(d)
                if dm.Format() == 0:
                    dims.append(("dense", dm.DenseSize(), None, None))
                else:
                    dims.append(("csr", 0, _vector(dm.ArraySegmentsType(), dm.ArraySegments()),
                                 _vector(dm.ArrayIndicesType(), dm.ArrayIndices())))
            sp = Sparsity(s.TraversalOrderAsNumpy().tolist(),
                          s.BlockMapAsNumpy().tolist() if s.BlockMapLength() else [], dims)
        elif arr is not None:
            arr = arr.reshape(shape)
        tensors.append(Tensor(i, t.Name().decode(), shape, dtype, arr, sp))
    ops = []
    for i in range(g.OperatorsLength()):
        op = g.Operators(i)
        oc = m.OperatorCodes(op.OpcodeIndex())
        # Since schema 3a the code is in builtin_code; older files keep it in the deprecated byte.
        name = op_names[max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())]
        ops.append(Operator(name, op.InputsAsNumpy().tolist(), op.OutputsAsNumpy().tolist(), _options(name, op)))
    return Graph(tensors, ops, g.InputsAsNumpy().tolist(), g.OutputsAsNumpy().tolist(), metadata, m.Version())


def densify(t: Tensor) -> np.ndarray:
    """The dense array of a sparse constant tensor (TFLite's DENSIFY, done at conversion time):
    the stored dimensions are visited in traversal order; a dense dimension enumerates 0..size-1,
    a CSR dimension lists, for each position of the dimensions before it, the coordinates
    indices[segments[p]:segments[p+1]]. Block sparsity (block_map) is not handled."""
    sp = t.sparsity
    if sp.block_map:
        raise ValueError(f"{t.name}: block-sparse tensors are not handled")
    if sorted(sp.traversal_order) != list(range(len(t.shape))) or len(sp.dims) != len(t.shape):
        raise ValueError(f"{t.name}: traversal order {sp.traversal_order} for shape {t.shape}")
    # Each entry: (position in the stored structure, coordinates so far).
    entries = [(0, ())]
    for level, (fmt, size, segments, indices) in enumerate(sp.dims):
        nxt = []
        for pos, coords in entries:
            if fmt == "dense":
                nxt.extend((pos * size + i, coords + (i,)) for i in range(size))
            else:
                nxt.extend((k, coords + (int(indices[k]),)) for k in range(segments[pos], segments[pos + 1]))
        entries = nxt
    values = t.data
    if len(entries) != values.size:
        raise ValueError(f"{t.name}: {len(entries)} sparse positions for {values.size} values")
    out = np.zeros(t.shape, dtype=values.dtype)
    order = sp.traversal_order
    for pos, coords in entries:
        idx = [0] * len(order)
        for level, c in enumerate(coords):
            idx[order[level]] = c
        out[tuple(idx)] = values[pos]
    return out
