"""CreateOperator's validation: desc structs -> frozen OpSpec, checked against the schema.

Rules are those of DirectML: the tensor desc itself (type, sizes, strides, total size,
alignment), the operator's support table at the device's feature level (dimension counts,
data types, required tensors), then the operator's own rules from its registry entry.
Every failure raises E_INVALIDARG with a message that starts with the operator's name.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._schema.enums_generated import DML_TENSOR_TYPE
from .._schema.operators_generated import DESC_STRUCTS
from . import dtypes
from .config import fl_name
from .hresult import E_INVALIDARG, fail
from .tensor import OpSpec, TensorSpec

DML_TENSOR_TYPE_BUFFER = int(DML_TENSOR_TYPE.DML_TENSOR_TYPE_BUFFER)
UINT32_MAX = 0xFFFFFFFF


def _seq(value, what):
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and \
            not hasattr(value, "__array__"):
        fail(E_INVALIDARG, f"{what} must be a sequence, got {type(value).__name__}")
    return [v for v in value]


def _int(value, what, lo=0, hi=UINT32_MAX):
    """An integer field's value: an int or NumPy integer (a float, even 2.0, a bool or a string
    is E_INVALIDARG: C's UINT/INT fields take no other kind)."""
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        fail(E_INVALIDARG, f"{what} must be an integer, got {value!r}")
    v = value.__index__()
    if not lo <= v <= hi:
        fail(E_INVALIDARG, f"{what} is {v}; it must be in [{lo}, {hi}]")
    return v


def tensor_desc(desc, what: str) -> TensorSpec:
    """Validate and freeze one DML_TENSOR_DESC (the struct-level rules, no support table)."""
    ttype = getattr(desc, "Type", None)
    if ttype != DML_TENSOR_TYPE_BUFFER:
        fail(E_INVALIDARG, f"{what}.Type is {ttype!r}; only DML_TENSOR_TYPE_BUFFER (1) exists")
    b = getattr(desc, "Desc", None)
    if b is None or not hasattr(b, "Sizes"):
        fail(E_INVALIDARG, f"{what}.Desc must point to a DML_BUFFER_TENSOR_DESC, got {b!r}")
    dt = _int(b.DataType, f"{what}.DataType")
    if dt not in dtypes.ELEMENT_SIZE_BITS:
        fail(E_INVALIDARG, f"{what}.DataType is {dt}, which is not a valid DML_TENSOR_DATA_TYPE")
    flags = _int(b.Flags, f"{what}.Flags")
    if flags & ~1:
        fail(E_INVALIDARG, f"{what}.Flags is 0x{flags:X}; the only flag is "
                           "DML_TENSOR_FLAG_OWNED_BY_DML (0x1)")
    sizes = _seq(b.Sizes, f"{what}.Sizes")
    if not sizes:
        fail(E_INVALIDARG, f"{what}.Sizes must hold DimensionCount sizes, got {b.Sizes!r}")
    dims = _int(b.DimensionCount, f"{what}.DimensionCount")
    if dims not in (0, len(sizes)):
        fail(E_INVALIDARG, f"{what}.DimensionCount is {dims} but Sizes has {len(sizes)} entries")
    sizes = tuple(_int(s, f"{what}.Sizes[{i}]") for i, s in enumerate(sizes))
    for i, s in enumerate(sizes):
        if s == 0:
            fail(E_INVALIDARG, f"{what}.Sizes[{i}] is 0; a size of zero in any dimension is invalid")
    strides = _seq(b.Strides, f"{what}.Strides")
    if strides is not None:
        if len(strides) != len(sizes):
            fail(E_INVALIDARG, f"{what}.Strides has {len(strides)} entries but DimensionCount "
                               f"is {len(sizes)}")
        strides = tuple(_int(s, f"{what}.Strides[{i}]") for i, s in enumerate(strides))
    count = 1
    for s in sizes:
        count *= s
    if count > UINT32_MAX:
        fail(E_INVALIDARG, f"{what} has {count} elements; a buffer tensor may not exceed 2^32-1")
    need = dtypes.calc_buffer_tensor_size(dt, sizes, strides)
    total = _int(b.TotalTensorSizeInBytes, f"{what}.TotalTensorSizeInBytes", 0, 2**64 - 1)
    if total < need:
        fail(E_INVALIDARG, f"{what}.TotalTensorSizeInBytes is {total} but the sizes, strides and "
                           f"data type imply at least {need} (DMLCalcBufferTensorSize)")
    align = _int(getattr(b, "GuaranteedBaseOffsetAlignment", 0) or 0,
                 f"{what}.GuaranteedBaseOffsetAlignment")
    if align and (align & (align - 1) or align * 8 < dtypes.ELEMENT_SIZE_BITS[dt]):
        fail(E_INVALIDARG, f"{what}.GuaranteedBaseOffsetAlignment is {align}; it must be 0 or a "
                           "power of two at least as large as the element size")
    return TensorSpec(dt, sizes, strides, flags, total, align)


def _float(value, what) -> float:
    """A C FLOAT field's value: a number (a struct left as C's {} holds 0.0). None, a string
    or a bool is E_INVALIDARG naming the field (np.float32(None) would be a silent NaN)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        fail(E_INVALIDARG, f"{what} is {value!r}; a FLOAT is required (0.0 is C's default)")
    return float(np.float32(value))


def _attribute(f, value, what, normalize_op):
    st = f.get("schema_type")
    if st in ("uint", "int", None):
        if value is None:  # an omitted field is C's 0; an explicit None names no number
            if "*" in f["type"]:
                return None
            fail(E_INVALIDARG, f"{what} is None; a {f['type']} is required (0 is C's default)")
        if f["type"] == "BOOL" and isinstance(value, (bool, np.bool_)):
            return int(value)  # C's BOOL is an int: Python's True / False are its values
        lo = -(2**31) if st == "int" else 0
        return _int(value, what, lo, UINT32_MAX)
    if st == "bool":
        return bool(value)
    if st == "float":  # the C field is a FLOAT: keep exactly the float32 the struct holds
        return _float(value, what)
    if st in ("uint_array", "int_array", "float_array"):
        seq = _seq(value, what)
        if seq is None:
            return None
        if st == "float_array":
            return tuple(_float(v, f"{what}[{i}]") for i, v in enumerate(seq))
        lo = -(2**31) if st == "int_array" else 0
        hi = 2**31 - 1 if st == "int_array" else UINT32_MAX
        return tuple(_int(v, f"{what}[{i}]", lo, hi) for i, v in enumerate(seq))
    if st == "scale_bias":
        if value is None:
            return None
        return (_float(value.Scale, f"{what}.Scale"), _float(value.Bias, f"{what}.Bias"))
    if st == "scalar_union":
        return bytes(value.Bytes) if value is not None else bytes(8)
    if st == "size_2d":
        return (_int(value.Width, f"{what}.Width", 0, UINT32_MAX),
                _int(value.Height, f"{what}.Height", 0, UINT32_MAX))
    if st == "operator_desc":
        return None if value is None else normalize_op(value, what)
    if st == "operator_desc_array":
        seq = _seq(value, what) or []
        return tuple(normalize_op(v, f"{what}[{i}]") for i, v in enumerate(seq))
    return value


def operator_desc(op_desc, schemas_by_value: dict, what="CreateOperator", nested=False) -> OpSpec:
    """Freeze a DML_OPERATOR_DESC into an OpSpec; struct-level checks only."""
    op_type = getattr(op_desc, "Type", None)
    schema = schemas_by_value.get(op_type)
    if schema is None:
        fail(E_INVALIDARG, f"{what}: DML_OPERATOR_DESC.Type is {op_type!r}, which is not a "
                           "DML_OPERATOR_TYPE")
    name = schema["name"]
    desc = getattr(op_desc, "Desc", None)
    if desc is None:
        fail(E_INVALIDARG, f"{name}: DML_OPERATOR_DESC.Desc is null; it must point to a "
                           f"{schema['desc_struct']}")
    expected = schema["desc_struct"]
    if type(desc) is not DESC_STRUCTS[name]:  # by class: header aliases name one class
        fail(E_INVALIDARG, f"{name}: DML_OPERATOR_DESC.Desc is a {type(desc).__name__}; "
                           f"the operator type needs a {expected}")
    fields = {f["name"]: f for f in schema["fields"]}
    values = {n: getattr(desc, n) for n in fields}

    def nested_op(v, w):
        return operator_desc(v, schemas_by_value, w, nested=True)

    # Count fields ("InputCount" for InputTensors, ...): 0 means "the sequence's length".
    for f in schema["fields"]:
        cf = f.get("count_field")
        if cf and cf in fields and values[f["name"]] is not None:
            seq = _seq(values[f["name"]], f"{name}: {f['name']}")
            given = values[cf]
            if given not in (0, None) and int(given) != len(seq):
                fail(E_INVALIDARG, f"{name}: {cf} is {given} but {f['name']} has {len(seq)} entries")
            values[cf] = len(seq)
    tensors, attrs = [], []
    for f in schema["fields"]:
        fname, value = f["name"], values[f["name"]]
        what_f = f"{name}: {fname}"
        if f.get("schema_type") == "tensor_desc":
            tensors.append((fname, None if value is None else tensor_desc(value, what_f)))
            if value is None and not f.get("optional"):
                if not nested:
                    fail(E_INVALIDARG, f"{what_f} is null but the tensor is required")
        elif f.get("schema_type") == "tensor_desc_array":
            seq = _seq(value, what_f) or []
            tensors.append((fname, tuple(tensor_desc(v, f"{what_f}[{i}]")
                                         for i, v in enumerate(seq))))
        else:
            attrs.append((fname, _attribute(f, value, what_f, nested_op)))
    return OpSpec(name, tuple(tensors), tuple(attrs), tuple(schema["inputs"]),
                  tuple(schema["outputs"]))


def support_block(schema: dict, level: int, condition_ok=None):
    """The support table that applies at ``level``: the highest 'X and above' <= level."""
    blocks = schema.get("support") or []
    if condition_ok is not None:
        blocks = [b for b in blocks if b.get("condition") is None or condition_ok(b["condition"])]
    usable = [b for b in blocks if b["feature_level"] <= level]
    if usable:
        return max(usable, key=lambda b: b["feature_level"])
    return min(blocks, key=lambda b: b["feature_level"]) if blocks else None


def check_support(spec: OpSpec, schema: dict, level: int, x64: bool, condition_ok=None):
    """Dimension counts, data types and required tensors against the feature level's table."""
    name = spec.name
    if schema["introduced"] > level:
        fail(E_INVALIDARG, f"{name}: introduced in {fl_name(schema['introduced'])}; the device's "
                           f"feature level is {fl_name(level)}")
    block = support_block(schema, level, condition_ok)
    tensors = spec.tensor
    fields = {f["name"]: f for f in schema["fields"]}
    for f in schema["fields"]:
        if f["kind"] == "output_tensor":
            t = tensors.get(f["name"])
            for tt in (t if isinstance(t, tuple) else (t,)):
                if tt is not None and tt.owned_by_dml:
                    fail(E_INVALIDARG, f"{name}: {f['name']}.Flags has DML_TENSOR_FLAG_OWNED_BY_DML"
                                       "; the flag is only valid on input tensors")
    if block is None:
        return
    table = f"table '{fl_name(block['feature_level'])} and above'"
    for row in block["tensors"]:
        value = tensors.get(row["name"], None)
        if row["name"] not in tensors:
            continue
        items = value if isinstance(value, tuple) else (value,)
        # The feature level's table decides ("Optional input" vs "Input"): QUANTIZE_LINEAR's
        # ZeroPointTensor is _Maybenull_ in the struct but required before FL 6_2.
        optional = row["optional"] if "optional" in row else \
            fields.get(row["name"], {}).get("optional")
        for i, t in enumerate(items):
            label = f"{row['name']}[{i}]" if isinstance(value, tuple) else row["name"]
            if t is None:
                if not optional:
                    fail(E_INVALIDARG, f"{name}: {label} is null but the tensor is required")
                continue
            dmin, dmax = row.get("dims_min"), row.get("dims_max")
            n = len(t.sizes)
            if dmin is not None and not dmin <= n <= dmax:
                fail(E_INVALIDARG, f"{name}: {label}.DimensionCount is {n}; {fl_name(level)} "
                                   f"supports {row.get('dims') or f'{dmin} to {dmax}'} ({table})")
            tname = dtypes.SHORT_NAMES[t.data_type]
            if row.get("types") and tname not in row["types"]:
                fail(E_INVALIDARG, f"{name}: {label}.DataType is DML_TENSOR_DATA_TYPE_{tname}, "
                                   f"which {fl_name(level)} does not support for this tensor; "
                                   f"supported: {', '.join(row['types'])} ({table})")
            if t.data_type in dtypes.SIXTY_FOUR_BIT and not x64:
                fail(E_INVALIDARG, f"{name}: {label}.DataType is {dtypes.name(t.data_type)} but "
                                   "dmlsim was imported with DMLSIM_X64=0, so JAX cannot hold "
                                   "64-bit values exactly")


# Fusable activations (docs/guide/dml-fused-activations.md): the generated schema marks them
# usable_as_fused_activation; ELEMENT_WISE_CLIP only "For Convolution and GEMM only". The
# feature-level history adds: CLIP joined "the supported fused activation list" in FL 6_0, and
# GEMM's FusedActivation "now supports ACTIVATION_SOFTMAX and ACTIVATION_SOFTMAX1" in FL 6_1.
_PARENTS = {"DML_OPERATOR_ELEMENT_WISE_CLIP": ("DML_OPERATOR_CONVOLUTION", "DML_OPERATOR_GEMM"),
            "DML_OPERATOR_ACTIVATION_SOFTMAX": ("DML_OPERATOR_GEMM",),
            "DML_OPERATOR_ACTIVATION_SOFTMAX1": ("DML_OPERATOR_GEMM",)}
_FUSABLE_FROM = {"DML_OPERATOR_ELEMENT_WISE_CLIP": 0x6000,
                 "DML_OPERATOR_ACTIVATION_SOFTMAX": 0x6100,
                 "DML_OPERATOR_ACTIVATION_SOFTMAX1": 0x6100}


def fused_activations(spec: OpSpec, schemas_by_value: dict, level: int) -> list:
    """Check every FusedActivation of ``spec`` and every entry of a recurrent operator's
    ActivationDescs; returns (label, nested OpSpec) for those that are set.

    A FusedActivation must be one the fused-activations guide lists (ELEMENT_WISE_CLIP only
    for CONVOLUTION and GEMM); an ActivationDescs entry any DML_OPERATOR_ACTIVATION_* type
    (the RNN, LSTM and GRU pages: "the activation operators"). Either must be introduced at
    the device's feature level, with InputTensor and OutputTensor NULL ("you must set [them]
    to NULL"). E_INVALIDARG otherwise."""
    found = []
    by_name = {s["name"]: s for s in schemas_by_value.values()}
    for field, value in spec.attrs:
        if field == "FusedActivation" and value is not None:
            subs = [(f"{spec.name}: FusedActivation", "FusedActivation", value)]
        elif field == "ActivationDescs" and value:
            subs = [(f"{spec.name}: ActivationDescs[{i}]", f"ActivationDescs[{i}]", v)
                    for i, v in enumerate(value)]
        else:
            continue
        for what, label, sub in subs:
            schema = by_name[sub.name]
            if field == "ActivationDescs":
                if not sub.name.startswith("DML_OPERATOR_ACTIVATION_"):
                    fail(E_INVALIDARG, f"{what} is {sub.name}, which is not an activation "
                                       "(DML_OPERATOR_ACTIVATION_*)")
            elif not (schema.get("usable_as_fused_activation") or sub.name in _PARENTS) or \
                    spec.name not in _PARENTS.get(sub.name, (spec.name,)):
                usable = sorted(n.replace("DML_OPERATOR_", "") for n, s in by_name.items()
                                if s.get("usable_as_fused_activation"))
                fail(E_INVALIDARG, f"{what} is {sub.name}, which cannot be fused into "
                                   f"{spec.short_name}; fusable: {', '.join(usable)} (CLIP only "
                                   "into CONVOLUTION and GEMM; ACTIVATION_SOFTMAX and "
                                   "ACTIVATION_SOFTMAX1 only into GEMM)")
            elif _FUSABLE_FROM.get(sub.name, 0) > level:
                fail(E_INVALIDARG, f"{what} is {sub.name}, which can be fused from "
                                   f"{fl_name(_FUSABLE_FROM[sub.name])} (the feature-level "
                                   f"history); the device's feature level is {fl_name(level)}")
            for tname, t in sub.tensors:
                if t is not None:
                    fail(E_INVALIDARG, f"{what} ({sub.name}): {tname} must be NULL in a fused "
                                       "activation desc; the fused operator supplies the tensors")
            if schema["introduced"] > level:
                fail(E_INVALIDARG, f"{what} is {sub.name}, introduced in "
                                   f"{fl_name(schema['introduced'])}; the device's feature level "
                                   f"is {fl_name(level)}")
            found.append((label, sub))
    return found
