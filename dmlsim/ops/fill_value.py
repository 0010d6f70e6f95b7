"""FILL_VALUE_CONSTANT and FILL_VALUE_SEQUENCE (FL 2_1): operators without inputs.

- FILL_VALUE_CONSTANT: every output element is Value.
- FILL_VALUE_SEQUENCE: OutputTensor[i] = ValueStart + i * ValueDelta, i the element's
  row-major index.

ValueDataType must equal OutputTensor.DataType; the DML_SCALAR_UNION values are read as that
type (FLOAT16 from the union's low two bytes). Integer sequences are computed in the tensor
type and wrap (the page's UINT8 example: 10 + i * (-2 as 254)); float sequences are computed
in float64 and rounded once, so element i is the correctly rounded ValueStart + i *
ValueDelta of the stored start and delta. FILL_VALUE_CONSTANT copies the value's bits.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register
from ._movement import bits_scalar, from_bits
from ._scalar import scalar_type_rule, scalar_value

OUT = "OutputTensor"


def fill_value_constant(*, ValueDataType, Value, ctx):
    out = ctx.outputs[OUT]
    bits = bits_scalar(scalar_value(Value, ValueDataType), out.np_dtype)
    return from_bits(jnp.full(out.sizes, bits), out.np_dtype)


def fill_value_constant_reference(*, ValueDataType, Value, ctx):
    out = ctx.outputs[OUT]
    return np.full(out.sizes, scalar_value(Value, ValueDataType), out.np_dtype)


def fill_value_sequence(*, ValueDataType, ValueStart, ValueDelta, ctx):
    out = ctx.outputs[OUT]
    dt = out.np_dtype
    start, delta = scalar_value(ValueStart, ValueDataType), scalar_value(ValueDelta, ValueDataType)
    if dt.kind == "f":
        i = jnp.arange(out.count, dtype=jnp.float64)
        return (np.float64(start) + i * np.float64(delta)).reshape(out.sizes)
    i = jnp.arange(out.count, dtype=jnp.uint64).astype(dt)  # wraps as the type does
    return (jnp.asarray(start, dt) + i * jnp.asarray(delta, dt)).reshape(out.sizes)


def fill_value_sequence_reference(*, ValueDataType, ValueStart, ValueDelta, ctx):
    out = ctx.outputs[OUT]
    dt = out.np_dtype
    start, delta = scalar_value(ValueStart, ValueDataType), scalar_value(ValueDelta, ValueDataType)
    if dt.kind == "f":
        return (float(start) + np.arange(out.count) * float(delta)).reshape(out.sizes)
    bits, signed = 8 * dt.itemsize, dt.kind == "i"
    vals = [(int(start) + i * int(delta)) % (1 << bits) for i in range(out.count)]
    return np.array(vals, np.uint64).astype(dt).reshape(out.sizes) if not signed else \
        np.array([v - (1 << bits) if v >= 1 << (bits - 1) else v for v in vals],
                 dt).reshape(out.sizes)


def _given(spec, check):
    out = spec.tensor.get(OUT)
    if out is None:
        check.fail("OutputTensor's Sizes (any size) are the desc's; give its tensor desc")
    return {OUT: Sizes(out.sizes, "OutputTensor")}


def _type(spec):
    return {OUT: spec.attr["ValueDataType"]}


f32 = np.float32
register(OperatorDef(
    "DML_OPERATOR_FILL_VALUE_CONSTANT", fill_value_constant, fill_value_constant_reference,
    output_sizes=_given, output_types=_type, rules=(scalar_type_rule("ValueDataType", OUT),),
    examples=(
        Example({}, {OUT: np.full((1, 1, 2, 4), 13, f32)},
                {"ValueDataType": dtypes.FLOAT32, "Value": f32(13)}, "the page's example"),
        Example({}, {OUT: np.array([0x7FC0BEEF] * 3, np.uint32).view(f32)},
                {"ValueDataType": dtypes.FLOAT32,
                 "Value": np.array(0x7FC0BEEF, np.uint32).view(f32)[()]},
                "a NaN with a payload: its bits"),
        Example({}, {OUT: np.full((2,), -2**63, np.int64)},
                {"ValueDataType": dtypes.INT64, "Value": np.int64(-2**63)}),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_FILL_VALUE_SEQUENCE", fill_value_sequence, fill_value_sequence_reference,
    output_sizes=_given, output_types=_type, rules=(scalar_type_rule("ValueDataType", OUT),),
    ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=(
        Example({}, {OUT: f32([[[[3, 5, 7]]]])},
                {"ValueDataType": dtypes.FLOAT32, "ValueStart": f32(3), "ValueDelta": f32(2)},
                "the page's example 1"),
        Example({}, {OUT: np.uint8([[[[10, 8], [6, 4]]]])},
                {"ValueDataType": dtypes.UINT8, "ValueStart": np.uint8(10),
                 "ValueDelta": np.uint8(254)}, "the page's example 2: UINT8 delta -2 wraps"),
        Example({}, {OUT: f32([0.1, 0.2, 0.3])},
                {"ValueDataType": dtypes.FLOAT32, "ValueStart": f32(0.1), "ValueDelta": f32(0.1)},
                "rounded once: 0.1f + 2 * 0.1f rounds to 0.3f"),
    ), module=__name__))
