"""ONNX model files as ONNX Runtime reads them, for ``dmlsim.onnx`` sessions: loading from a
path, bytes or a ModelProto (external data beside the file), ORT's free-dimension overrides,
the graph inputs a session describes with ``NodeArg`` and checks feeds against, and a model
specialized to the shapes a run's feeds fix (what the DML provider compiles per shape).

Every failure is an ``HResultError`` naming the model and what is wrong; ``onnx``'s exceptions
never leave (ORT answers INVALID_PROTOBUF, INVALID_GRAPH or INVALID_ARGUMENT for the same)."""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from .._api import public as dml


def _fail(hr, message):
    raise dml.HResultError(hr, f"dmlsim.onnx: {message}")


def load(source) -> tuple[onnx.ModelProto, str]:
    """(ModelProto, a name for messages) from a path (str / os.PathLike), bytes or a
    ModelProto. A path's external data is left on disk and read from beside the file (as
    ORT reads it) when a plan needs the initializer: ``base_dir(source)``."""
    if isinstance(source, onnx.ModelProto):
        return source, f"model '{source.graph.name or '(unnamed)'}'"
    if isinstance(source, (bytes, bytearray, memoryview)):
        what = f"the {len(source)} bytes given"
        try:
            model = onnx.load_model_from_string(bytes(source))
        except Exception as e:  # noqa: BLE001 -- protobuf's DecodeError and kin
            _fail(dml.E_INVALIDARG, f"{what} are not an ONNX model (INVALID_PROTOBUF): "
                                    f"{type(e).__name__}: {e}")
        return _checked(model, what), what
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        what = f"'{path}'"
        if not os.path.isfile(path):
            _fail(dml.E_INVALIDARG, f"{what}: no such file (NO_SUCHFILE)")
        try:  # external data stays on disk (read per initializer, from beside the file):
            model = onnx.load(path, load_external_data=False)  # a >2 GB model then fits
        except Exception as e:  # noqa: BLE001 -- a truncated or foreign file
            _fail(dml.E_INVALIDARG, f"{what} is not an ONNX model (INVALID_PROTOBUF): "
                                    f"{type(e).__name__}: {e}")
        return _checked(model, what), what
    _fail(dml.E_INVALIDARG, "InferenceSession: path_or_bytes is a "
                            f"{type(source).__name__}; give a path, bytes or an onnx.ModelProto")


def base_dir(source) -> str:
    """The folder a model's external data is read from: the file's, else the working one."""
    if isinstance(source, (str, os.PathLike)):
        return os.path.dirname(os.path.abspath(os.fspath(source)))
    return ""


def _checked(model, what):
    """A model that decoded: it must have a graph (an empty or foreign file decodes too)."""
    if not model.HasField("graph") or not (model.graph.node or model.graph.output):
        _fail(dml.E_INVALIDARG, f"{what} has no graph (INVALID_GRAPH): an empty file, or not "
                                "an ONNX model")
    return model


# ---- graph inputs -----------------------------------------------------------------------------

_TYPE_NAMES = {onnx.TensorProto.FLOAT: "float", onnx.TensorProto.DOUBLE: "double",
               onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.BFLOAT16: "bfloat16",
               onnx.TensorProto.BOOL: "bool", onnx.TensorProto.STRING: "string"}


def type_string(elem_type: int) -> str:
    """ORT's NodeArg.type: 'tensor(float)', 'tensor(int64)', ..."""
    name = _TYPE_NAMES.get(elem_type) or onnx.TensorProto.DataType.Name(elem_type).lower()
    return f"tensor({name})"


def elem_type_of(dtype) -> int:
    """The ONNX TensorProto type of NumPy ``dtype``; 0 (UNDEFINED) for one ONNX lacks."""
    try:
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    except (KeyError, TypeError, ValueError):
        return 0


def np_dtype(type_str: str) -> np.dtype:
    """The NumPy dtype of an ORT type string ('tensor(float16)'): ``type_string``'s inverse."""
    name = type_str[len("tensor("):-1]
    elem = next((e for e, n in _TYPE_NAMES.items() if n == name), None)
    if elem is None:
        elem = onnx.TensorProto.DataType.Value(name.upper())
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem))


class Dim(NamedTuple):
    value: int | None      # fixed size, else None
    param: str | None      # symbolic name, else None
    denotation: str


class InputSpec(NamedTuple):
    """A graph input (or output) as declared: element type and dims (after overrides)."""

    name: str
    elem_type: int
    dims: tuple | None     # None: no shape at all (any rank)

    @property
    def dtype(self):
        return helper.tensor_dtype_to_np_dtype(self.elem_type) if self.elem_type else None

    def shape(self) -> list | None:
        """ORT's NodeArg.shape: ints for fixed dims, the name of a symbolic one, None for a
        dimension with neither."""
        if self.dims is None:
            return None
        return [d.value if d.value is not None else d.param for d in self.dims]


UNNAMED = "?"  # paddle2onnx names every free dimension "?": they are not one size (ORT checks none)


def fixed(d) -> bool:
    """Whether a TensorShapeProto dimension has a fixed size. A negative ``dim_value`` (the -1
    that paddle2onnx writes for a free batch) is free, as ONNX Runtime reads it."""
    return d.HasField("dim_value") and d.dim_value >= 0


def specs(values) -> list:
    out = []
    for vi in values:
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if t is None:
            out.append(InputSpec(vi.name, 0, None))
            continue
        dims = None
        if t.HasField("shape"):
            dims = tuple(Dim(int(d.dim_value) if fixed(d) else None,
                             d.dim_param if d.HasField("dim_param") else None,
                             d.denotation) for d in t.shape.dim)
        out.append(InputSpec(vi.name, t.elem_type, dims))
    return out


def runtime_inputs(model) -> list:
    """The graph inputs a run feeds: those that are not initializers (ORT's get_inputs(); an
    input with an initializer of the same name takes the initializer)."""
    inits = {i.name for i in model.graph.initializer}
    return specs([vi for vi in model.graph.input if vi.name not in inits])


def override_free_dimensions(model, by_name: dict, by_denotation: dict):
    """A copy of ``model`` with ORT's free-dimension overrides applied to the graph inputs'
    symbolic dimensions (``add_free_dimension_override_by_name`` / ``_by_denotation``)."""
    if not by_name and not by_denotation:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for vi in out.graph.input:
        if not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            value = None
            if d.HasField("dim_param") and d.dim_param in by_name:
                value = by_name[d.dim_param]
            elif d.denotation and d.denotation in by_denotation and not fixed(d):
                value = by_denotation[d.denotation]
            if value is not None:
                d.dim_value = int(value)
    return out


def specialize(model, shapes: dict, constants: dict, dtypes=None):
    """``model`` with the graph inputs in ``shapes`` ({name: shape}) made static and those in
    ``constants`` ({name: array}) turned into initializers; value_info dropped (it may hold the
    symbolic dims: shape inference fills it again with the bound ones). An input declared
    without an element type (a partition's input from a CPU node shape inference could not
    type) takes the one in ``dtypes`` ({name: numpy dtype})."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.value_info[:]
    keep = []
    for vi in out.graph.input:
        if vi.name in constants:
            continue
        if vi.name in shapes and vi.type.HasField("tensor_type"):
            if not vi.type.tensor_type.elem_type and dtypes and vi.name in dtypes:
                vi.type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(
                    np.dtype(dtypes[vi.name]))
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for s in shapes[vi.name]:
                shape.dim.add().dim_value = int(s)
        keep.append(vi)
    del out.graph.input[:]
    out.graph.input.extend(keep)
    out.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(a), n)
                                 for n, a in constants.items())
    return out
