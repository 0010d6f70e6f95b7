"""What dmlsim implements: operators with feature levels, and the emulated device."""
from __future__ import annotations

import jax

from .._core import config, dtypes, registry, validation
from .._core.hresult import E_INVALIDARG, E_NOTIMPL, fail
from .._schema.operators_generated import DESC_STRUCTS, OPERATORS
from .._schema.enums_generated import DML_TENSOR_TYPE_BUFFER
from .._schema.struct import DML_SCALAR_UNION
from .._schema.structs_generated import DML_BUFFER_TENSOR_DESC, DML_OPERATOR_DESC, \
    DML_SCALE_BIAS, DML_SIZE_2D, DML_TENSOR_DESC
from .dml import IDMLOperator

_BY_VALUE = {s["value"]: s for s in OPERATORS.values()}


def supported_operators() -> list:
    """[(operator name, introduced DML_FEATURE_LEVEL value)] for every operator dmlsim
    implements, sorted by name. Every other DML_OPERATOR_TYPE raises E_NOTIMPL."""
    return [(n, OPERATORS[n]["introduced"]) for n in registry.names()]


def info() -> dict:
    """The emulated device: feature level, JAX backend and devices, 64-bit mode, strict mode."""
    return {
        "feature_level": config.fl_name(config.settings.feature_level),
        "jax_version": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "jax_enable_x64": bool(jax.config.read("jax_enable_x64")),
        "strict": config.settings.strict,
        "operators_implemented": len(registry.names()),
        "operators_in_spec": len(OPERATORS),
    }


def _tensor(data_type, sizes):
    sizes = [int(s) for s in sizes]
    b = DML_BUFFER_TENSOR_DESC(data_type, 0, len(sizes), sizes, None)
    b.TotalTensorSizeInBytes = dtypes.calc_buffer_tensor_size(data_type, sizes)
    return DML_TENSOR_DESC(DML_TENSOR_TYPE_BUFFER, b)


def infer_outputs(op_desc, feature_level=None) -> dict:
    """dmlsim addition: ``{output field: DML_TENSOR_DESC}`` for a DML_OPERATOR_DESC whose
    output tensors may be left null, from the operator's shape rule (packed tensors; the
    rule's data types, by default the first input's). A tensor-array output (SPLIT's
    OutputTensors) gives a list. Raises E_INVALIDARG, naming the field, for a desc the
    operator's rules reject; E_NOTIMPL for an operator dmlsim does not implement."""
    schema = _BY_VALUE.get(getattr(op_desc, "Type", None))
    if schema is not None and registry.get(schema["name"]) is None:
        fail(E_NOTIMPL, f"{schema['name']}: not implemented in dmlsim")
    spec = validation.operator_desc(op_desc, _BY_VALUE, "infer_outputs", nested=True)
    level = config.settings.feature_level if feature_level is None else int(feature_level)
    out = {}
    for name, value in registry.infer(spec, level).items():
        if isinstance(value, list):
            out[name] = [_tensor(dt, sizes) for dt, sizes in value]
        else:
            if value[0] is None:
                fail(E_INVALIDARG, f"{spec.name}: the data type of {name} cannot be inferred; "
                                   "give its tensor desc")
            out[name] = _tensor(*value)
    return out


def set_feature_level(level) -> None:
    """Set the feature level that devices created from now on emulate (default 6_4): a
    DML_FEATURE_LEVEL value or a string like ``"5_1"`` (as ``DMLSIM_FEATURE_LEVEL=5_1``).
    Anything else is E_INVALIDARG."""
    config.set_feature_level(level)


def set_wait_timeout(seconds) -> None:
    """How long an INFINITE fence wait nothing submitted can satisfy may wait, while other
    threads run and none signals the fence from the CPU, before E_FAIL (default 60 s; as
    ``DMLSIM_WAIT_TIMEOUT``). Anything but a positive number is E_INVALIDARG."""
    config.set_wait_timeout(seconds)


def operator_desc_of(op) -> DML_OPERATOR_DESC:
    """dmlsim addition: the DML_OPERATOR_DESC an IDMLOperator was created from, as
    CreateOperator froze it (count fields filled, fused activations as nested descs). DirectML
    cannot be asked this; dmlsim uses it to write serialized graphs."""
    if not isinstance(op, IDMLOperator):
        fail(E_INVALIDARG, f"operator_desc_of: op is {type(op).__name__}; an IDMLOperator is "
                           "required")
    return _desc_of_spec(op._core.spec)


def _desc_of_spec(spec) -> DML_OPERATOR_DESC:
    schema = OPERATORS[spec.name]
    kinds = {f["name"]: f["schema_type"] for f in schema["fields"]}
    desc = DESC_STRUCTS[spec.name]()
    for name, value in spec.tensors:
        if isinstance(value, tuple):
            value = [_tensor_of(t) for t in value]
        elif value is not None:
            value = _tensor_of(value)
        setattr(desc, name, value)
    for name, value in spec.attrs:
        kind = kinds[name]
        if value is None:
            pass
        elif kind == "scale_bias":
            value = DML_SCALE_BIAS(*value)
        elif kind == "size_2d":
            value = DML_SIZE_2D(*value)
        elif kind == "scalar_union":
            union = DML_SCALAR_UNION()
            union.Bytes = bytes(value)
            value = union
        elif kind == "operator_desc":
            value = _desc_of_spec(value)
        elif kind == "operator_desc_array":
            value = [_desc_of_spec(v) for v in value]
        elif isinstance(value, tuple):
            value = list(value)
        setattr(desc, name, value)
    return DML_OPERATOR_DESC(schema["value"], desc)


def _tensor_of(t) -> DML_TENSOR_DESC:
    b = DML_BUFFER_TENSOR_DESC(t.data_type, t.flags, len(t.sizes), list(t.sizes),
                               None if t.strides is None else list(t.strides), t.total_bytes,
                               t.base_alignment)
    return DML_TENSOR_DESC(DML_TENSOR_TYPE_BUFFER, b)
