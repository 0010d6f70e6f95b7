"""Reading DxDispatch models as DxDispatch's C++ parser reads them (its ``_schema.json`` is
stale; the parser is the format). Structure is checked with ``jsonschema``
(``dxdispatch_schema.json``); values are read here:

- JSON with comments and trailing commas (the parser's flags allow both);
- buffers: ``initialValues`` as an array (numbers, or "nan"/"inf" strings; without
  ``initialValuesDataType`` an array of ``{type, value}``), a constant ``{valueCount, value}``,
  a sequence ``{valueCount, valueStart, valueDelta}`` (accumulated in the element type:
  ``value += delta``, as the parser does), or a file ``{sourcePath}``: ``.npy`` with its own
  dtype, anything else raw bytes typed by ``initialValuesDataType``; paths relative to the model
  file first, then the working directory. FLOAT32 numbers are read as doubles and rounded
  once; FLOAT16 ones as float32, then to half (the parser's ``half(float(v))``);
- tensor descs inline or as ``{"Type": ..., "Desc": {...}}``; nested operator descs
  (``FusedActivation``, ``ActivationDescs``) as ``{"Type": ..., <fields>}`` or
  ``{"Type": ..., "Desc": {...}}`` (``type``/``desc`` too), tensors left out;
- ``DML_SCALAR_UNION`` as a number typed by the sibling ``*DataType`` field (FLOAT16: the
  half's bits) or as ``{"Float32": ...}``-style members;
- enums and flags as full names or suffixes, flags as one string or an array.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .._api import public as dml
from .._core import dtypes
from .._schema.operators_generated import DESC_STRUCTS, OPERATORS


class ModelError(ValueError):
    """A model DxDispatch's parser would refuse (or dmlsim cannot run), with the reason."""


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments and trailing commas outside strings."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif c in "]}":
            j = len(out) - 1
            while j >= 0 and out[j].isspace():
                j -= 1
            if j >= 0 and out[j] == ",":
                del out[j]
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def data_type(name) -> int:
    short = str(name).replace("DML_TENSOR_DATA_TYPE_", "")
    if short not in dtypes.BY_SHORT_NAME:
        raise ModelError(f"{name!r} is not a DML_TENSOR_DATA_TYPE")
    return dtypes.BY_SHORT_NAME[short]


def number(value, np_type):
    """One JSON value as ``np_type``, the parser's way."""
    kind = np.dtype(np_type).kind
    if isinstance(value, str):
        text = value.strip().lower()
        special = {"nan": math.nan, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
                   "infinity": math.inf, "-infinity": -math.inf}
        if text in special and kind == "f":
            value = special[text]
        else:
            try:
                value = float(text) if kind == "f" else int(text, 0)
            except ValueError:
                raise ModelError(f"{value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(f"{value!r} is not a number")
    if kind == "f":
        if np.dtype(np_type) == np.float16:
            return np.float16(np.float32(value))
        return np.dtype(np_type).type(value)
    if isinstance(value, float) and not value.is_integer():
        raise ModelError(f"{value!r} is not an integer")
    info = np.iinfo(np_type)
    if not info.min <= int(value) <= info.max:
        raise ModelError(f"{value!r} is out of range for {np.dtype(np_type).name}")
    return np.dtype(np_type).type(int(value))


def initial_values(spec: dict, base: Path) -> tuple[bytes, int]:
    """(bytes, DML_TENSOR_DATA_TYPE or 0) of a buffer's ``initialValues``."""
    dt = data_type(spec["initialValuesDataType"]) if "initialValuesDataType" in spec else 0
    iv = spec["initialValues"]
    np_type = dtypes.numpy_dtype(dt) if dt else None

    def need_type():
        if not dt:
            raise ModelError("Field 'initialValuesDataType' is required.")

    if isinstance(iv, str):
        raise ModelError(f"initialValues {iv!r} (deferred binding) is not supported by dmlsim")
    if isinstance(iv, list):
        if not dt:
            data = b"".join(number(e["value"], dtypes.numpy_dtype(data_type(e["type"])))
                            .tobytes() for e in iv)
        else:
            data = np.array([number(v, np_type) for v in iv], np_type).tobytes()
    elif "value" in iv:
        if "valueStart" in iv or "sourcePath" in iv:
            raise ModelError("initialValues may contain a value, valueStart, or sourcePath, "
                             "but they are mutually exclusive.")
        need_type()
        data = np.full(int(iv["valueCount"]), number(iv["value"], np_type), np_type).tobytes()
    elif "valueStart" in iv:
        need_type()
        steps = np.full(int(iv["valueCount"]), number(iv["valueDelta"], np_type), np_type)
        if steps.size:
            steps[0] = number(iv["valueStart"], np_type)
        with np.errstate(over="ignore", invalid="ignore"):
            data = np.cumsum(steps, dtype=np_type).tobytes()  # value += delta, in the type
    elif "sourcePath" in iv:
        data, file_type = _from_file(base, iv["sourcePath"])
        if file_type and dt and file_type != dt:
            raise ModelError(f"Data type from file '{iv['sourcePath']}' does not match field "
                             "'initialValuesDataType'.")
        dt = dt or file_type
        need_type()
    else:
        raise ModelError("Error parsing 'initialValues' object: unknown generator type.")
    if not data:
        raise ModelError("'initialValues' must be non-empty.")
    return data, dt


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff")


def refuse_image(path, what: str) -> None:
    """DxDispatch reads and writes images through WIC (ReadTensorFromImage /
    WriteTensorToImage), which exists only on Windows; dmlsim refuses them by name."""
    if Path(str(path)).suffix.lower() in IMAGE_SUFFIXES:
        raise ModelError(f"{what} '{path}' is an image: DxDispatch converts images with WIC "
                         "(ReadTensorFromImage / WriteTensorToImage), which is not implemented "
                         "off Windows; give dmlsim a .npy file or raw bytes instead")


def dispatchable_desc(spec: dict) -> dict:
    """A DML dispatchable's operator fields: under "desc" (or "Desc", as DxDispatch's Guide.md
    writes it), else written inline in the dispatchable object itself, which DxDispatch's
    ParseDmlOperatorDesc falls back to."""
    for key in ("desc", "Desc"):
        if key in spec:
            return spec[key]
    return {k: v for k, v in spec.items() if k not in DISPATCHABLE_KEYS}


DISPATCHABLE_KEYS = ("type", "executionFlags", "dmlCompileType", "bindings")


def _from_file(base: Path, source: str) -> tuple[bytes, int]:
    refuse_image(source, "initialValues sourcePath")
    path = base / source
    if not path.exists():
        path = Path(source).absolute()
    try:
        raw = path.read_bytes()
    except OSError:
        raise ModelError(f"Given filename '{path}' could not be opened.") from None
    if path.suffix.lower() != ".npy":
        return raw, 0
    array = np.load(path, allow_pickle=False)
    return np.ascontiguousarray(array).tobytes(), dtypes.dml_type_of(array.dtype)


def enum_value(value, ctype: str) -> int:
    """An enum or flags value: an integer, a full name, a suffix, or (flags) a list of them."""
    if isinstance(value, list) and ctype.endswith("FLAGS"):
        out = 0
        for v in value:
            out |= enum_value(v, ctype)
        return out
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ModelError(f"{value!r} is not a {ctype} value")
    if isinstance(value, int):
        return value
    singular = ctype[:-1] if ctype.endswith("FLAGS") else ctype
    for candidate in (value, f"{ctype}_{value}", f"{singular}_{value}"):
        if hasattr(dml, candidate):
            return int(getattr(dml, candidate))
    raise ModelError(f"{value!r} is not a {ctype} value")


def tensor_desc(value):
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ModelError("Expected a non-null JSON object.")
    b = value.get("Desc", value)
    dt = data_type(b["DataType"])
    sizes = [int(s) for s in b["Sizes"]]
    strides = b.get("Strides") or None
    flags = enum_value(b.get("Flags", 0), "DML_TENSOR_FLAGS")
    desc = dml.DML_BUFFER_TENSOR_DESC(dt, flags, len(sizes), sizes, strides)
    desc.DimensionCount = int(b.get("DimensionCount", len(sizes)))
    desc.TotalTensorSizeInBytes = int(b.get("TotalTensorSizeInBytes") or
                                      dml.DMLCalcBufferTensorSize(dt, len(sizes), sizes, strides))
    desc.GuaranteedBaseOffsetAlignment = int(b.get("GuaranteedBaseOffsetAlignment", 0))
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, desc)


def _scalar(value, fields: dict, name: str, desc: dict):
    u = dml.DML_SCALAR_UNION()
    if isinstance(value, dict):
        for member, v in value.items():
            setattr(u, member, v)
        return u
    type_field = next((f for f in [name + "DataType"] + sorted(fields) if f.endswith("DataType")
                       and f in fields), None)
    if type_field is None or type_field not in desc:
        raise ModelError(f"{name}: a plain number needs the sibling *DataType field")
    np_type = dtypes.numpy_dtype(enum_value(desc[type_field], "DML_TENSOR_DATA_TYPE")
                                 if not isinstance(desc[type_field], str)
                                 else data_type(desc[type_field]))
    u.Bytes = number(value, np_type).tobytes().ljust(8, b"\0")
    return u


def operator_desc(op_type: str, desc: dict, nested: bool = False):
    """DML_OPERATOR_DESC from a DxDispatch desc (C field names)."""
    name = op_type if str(op_type).startswith("DML_OPERATOR_") else "DML_OPERATOR_" + str(op_type)
    if name not in OPERATORS:
        raise ModelError(f"{op_type!r} is not a DML_OPERATOR_TYPE")
    schema = OPERATORS[name]
    fields = {f["name"]: f for f in schema["fields"]}
    unknown = sorted(set(desc) - set(fields))
    if unknown:
        raise ModelError(f"{name}: no field {unknown[0]!r}")
    out = DESC_STRUCTS[name]()
    for fname, f in fields.items():
        if fname not in desc:
            continue
        v, st = desc[fname], f.get("schema_type")
        if st == "tensor_desc":
            v = tensor_desc(v)
        elif st == "tensor_desc_array":
            v = [tensor_desc(t) for t in v]
        elif st == "scale_bias":
            v = None if v is None else dml.DML_SCALE_BIAS(float(v["Scale"]), float(v["Bias"]))
        elif st == "size_2d":
            v = dml.DML_SIZE_2D(int(v["Width"]), int(v["Height"]))
        elif st == "operator_desc":
            v = None if v is None else nested_desc(v)
        elif st == "operator_desc_array":
            v = [nested_desc(x) for x in v]
        elif st == "scalar_union":
            v = _scalar(v, fields, fname, desc)
        elif st in ("float", "float_array"):
            v = [float(number(x, np.float32)) for x in v] if st == "float_array" \
                else float(number(v, np.float32))
        elif f["type"].startswith("DML_") and not f["type"].endswith("*"):
            v = enum_value(v, f["type"])
        setattr(out, fname, v)
    return dml.DML_OPERATOR_DESC(schema["value"], out)


def nested_desc(value):
    """``{"Type": ..., <fields>}`` or ``{"Type": ..., "Desc": {...}}`` (any case)."""
    if not isinstance(value, dict):
        raise ModelError("a nested operator desc must be an object with a Type")
    keys = {k.lower(): k for k in value}
    if "type" not in keys:
        raise ModelError("a nested operator desc needs a Type")
    op_type = value[keys["type"]]
    inner = value[keys["desc"]] if "desc" in keys else {
        k: v for k, v in value.items() if k != keys["type"]}
    return operator_desc(op_type, inner, nested=True)


def load_text(path) -> dict:
    path = Path(path)
    try:
        return json.loads(strip_jsonc(path.read_text()))
    except json.JSONDecodeError as e:
        raise ModelError(f"JSON parse error at line {e.lineno}, column {e.colno}: {e.msg}") \
            from None
