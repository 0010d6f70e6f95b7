"""Every registered operator's kernel against its float64 NumPy reference, per data type.

For each operator and each data type its support table lists at DML_FEATURE_LEVEL_6_4 (for
the operator's first input tensor), random tensors go through ``dmlsim.run`` (the whole
faithful path) and the results are compared with ``OperatorDef.reference``.

How the descs are derived, generically:
- The first Example supplies the attributes and the shapes. When every tensor of that example
  has one shape and no array attribute depends on the dimension count (element-wise
  operators), the shape is 2x3x4 instead (adjusted to the table's dimension range), unless
  CreateOperator refuses that (an operator rule such as SOFTMAX's effective rank).
- The *varied* tensors are the inputs whose support-table row lists the same data types as
  the first input's row; they get data type T and random values. Other inputs (indices,
  scales with their own rows) keep the example's arrays. An output gets T if its row allows
  T, otherwise one of its row's types (cycling with T, so UINT8 and UINT32 outputs of the
  logical operators are both covered).

Tolerances (``OperatorDef.ulp`` overrides the float ones, per data type):
- FLOAT32 / FLOAT16 / FLOAT64 outputs: at most 1 ULP of the output type from the float64
  reference rounded to that type (for + and * the kernel's result is correctly rounded, so it
  is in fact exact; FLOAT16 computes in float32 and rounds once, which is innocuous for one
  operation). NaN exactly where the reference is NaN; infinities exact. Results the reference
  puts in the subnormal range may be flushed to zero (XLA's CPU backend runs with FTZ/DAZ;
  DirectML leaves float32 denormal arithmetic to the hardware). Copies keep denormals; see
  test_memory.py.
- Integer outputs: exact. The reference computes in float64, which is exact only below 2^53,
  so elements whose reference magnitude reaches 2^53 are not compared (at least a quarter of
  the elements must be). A non-integral reference value is truncated toward zero
  (``dmlsim/ops/_elementwise.py``). A value outside the output type's range converts as that
  module documents: integer arithmetic wraps; when the desc has a float-only step (a FLOAT
  attribute such as SHRINK's Bias, or a ScaleBias) the result saturates instead.
- Logical / comparison outputs (0 or 1): exact.
"""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry, validation
from dmlsim._schema.operators_generated import OPERATORS

from helpers import (MAX_LEVEL, NP_OF_SHORT, assert_bits_equal, assert_float_close, example_desc,
                     feature_level, tolerance)

REGISTRY = registry.load_all()
# The types a case may take: NumPy's, and ml_dtypes' for the packed 4-bit types.
TYPES = {**NP_OF_SHORT, "INT4": np.dtype(ml_dtypes.int4), "UINT4": np.dtype(ml_dtypes.uint4)}
BY_VALUE = {s["value"]: s for s in OPERATORS.values()}
GENERIC_SHAPE = (2, 3, 4)


def _block(name):
    """The 6_4 support table (with the first example's attributes for conditional tables)."""
    opdef, schema = REGISTRY[name], OPERATORS[name]
    cond = None
    if opdef.condition is not None and opdef.examples:
        desc, _, _ = _example_parts(name)
        spec = validation.operator_desc(desc, BY_VALUE)
        cond = lambda c: opdef.condition(spec, c)  # noqa: E731
    return validation.support_block(schema, MAX_LEVEL, cond)


def _example_parts(name):
    ex = REGISTRY[name].examples[0]
    return example_desc(name, ex.inputs, ex.outputs, ex.attrs)


def _rows(name):
    block = _block(name)
    return {r["name"]: r for r in (block["tensors"] if block else ())}


def _primary(name):
    """The tensor whose data type the cases vary: the first input whose row lists the same
    types as the first output's row (ELEMENT_WISE_IF varies A/B, not ConditionTensor), else
    the first input with a row, else the first output."""
    schema, rows = OPERATORS[name], _rows(name)
    typed = [f for f in list(schema["inputs"]) + list(schema["outputs"])
             if f in rows and rows[f].get("types")]
    outs = [f for f in typed if f in schema["outputs"]]
    ins = [f for f in typed if f in schema["inputs"]]
    if outs:
        same = [f for f in ins if set(rows[f]["types"]) == set(rows[outs[0]]["types"])]
        if same:
            return same[0]
    return (ins or outs or [None])[0]


def _cases():
    cases = []
    for name in sorted(REGISTRY):
        if not REGISTRY[name].examples:
            continue
        primary = _primary(name)
        if primary is None:
            continue
        for t in _rows(name)[primary]["types"]:
            cases.append((name, t))
    return cases


CASES = _cases()


def random_values(rng, dtype, shape):
    """Random values of ``dtype``: floats N(0, 4^2) with NaN, +-inf and +-0 mixed in; integers a
    third each from the full range, from +-2^12 and from +-16 (unsigned: non-negative), with
    the type's extremes first."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 4).astype(dtype)
        if n >= 12:
            x[rng.choice(n, 5, replace=False)] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        return x.reshape(shape)
    info = ml_dtypes.iinfo(dtype)
    lo_small = 0 if info.min == 0 else -16
    lo_mid = 0 if info.min == 0 else -2**12
    pick = rng.integers(0, 3, n)
    wide = np.uint64 if info.max > 2**63 else np.int64
    full = rng.integers(info.min, info.max, n, dtype=wide, endpoint=True).astype(dtype)
    mid = rng.integers(max(lo_mid, info.min), min(2**12, info.max), n, endpoint=True)
    small = rng.integers(max(lo_small, info.min), min(16, info.max), n, endpoint=True)
    x = np.where(pick == 0, full, np.where(pick == 1, mid.astype(dtype), small.astype(dtype)))
    x = x.astype(dtype)
    if n >= 4:
        x[:2] = [info.min, info.max]
    return x.reshape(shape)


def _generic_shape(rows):
    lo = max([r.get("dims_min") or 1 for r in rows.values()] + [1])
    hi = min([r.get("dims_max") or 8 for r in rows.values()] + [8])
    if lo <= 3 <= hi:
        return GENERIC_SHAPE
    if lo > 3:
        return (1,) * (lo - 3) + GENERIC_SHAPE
    return (24,) if hi == 1 else (4, 6)


def _elementwise(ex, varied_inputs):
    arrays = [np.asarray(v) for v in list(ex.inputs.values()) + list(ex.outputs.values())
              if v is not None and not isinstance(v, (list, tuple))]
    if len({a.shape for a in arrays}) != 1 or len(varied_inputs) != len(ex.inputs):
        return False
    ndim = arrays[0].ndim
    for value in ex.attrs.values():
        if isinstance(value, (list, tuple)) and len(value) == ndim:
            return False
    return True


def build_case(name, t, rng, generic=True):
    """(desc, flat input arrays, inputs by field for the reference, outputs by field).
    ``generic``: use the 2x3x4 shape for element-wise examples."""
    opdef, schema, rows = REGISTRY[name], OPERATORS[name], _rows(name)
    ex = opdef.examples[0]
    primary_types = set(rows[_primary(name)]["types"])
    varied = {f for f in schema["inputs"]
              if f in rows and set(rows[f].get("types") or ()) == primary_types}
    shape = _generic_shape(rows) if generic and _elementwise(ex, varied) else None
    inputs = {}
    for field in schema["inputs"]:
        value = ex.inputs.get(field)
        if value is None:
            continue
        if field not in varied:
            inputs[field] = value
            continue
        dt = TYPES[t]
        if isinstance(value, (list, tuple)):
            inputs[field] = [random_values(rng, dt, shape or np.shape(v)) for v in value]
        else:
            inputs[field] = random_values(rng, dt, shape or np.shape(value))
    outputs = {}
    for k, field in enumerate(schema["outputs"]):
        value = ex.outputs.get(field)
        if value is None:
            continue
        types = [x for x in (rows.get(field, {}).get("types") or ()) if x in TYPES]
        if t in types or not types:
            out_t = t if t in types else None
        else:
            out_t = types[(sorted(TYPES).index(t) + k) % len(types)]
        dt = TYPES[out_t] if out_t else np.asarray(value).dtype
        if isinstance(value, (list, tuple)):
            outputs[field] = [np.zeros(shape or np.shape(v), dt) for v in value]
        else:
            outputs[field] = np.zeros(shape or np.shape(value), dt)
    desc, flat_in, _ = example_desc(name, inputs, outputs, _attrs(name, ex, t))
    return desc, flat_in, inputs, outputs


def _attrs(name, ex, t):
    """The example's attributes, with data-type attributes (CLIP1's MinMaxDataType) and
    NumPy-scalar unions that followed the varied tensors' example type moved to ``t``."""
    primary = _primary(name)
    sample = ex.inputs.get(primary)
    if sample is None:
        sample = ex.outputs.get(primary)
    if sample is None:  # an absent optional input: the output's type follows the case
        sample = ex.outputs.get(OPERATORS[name]["outputs"][0])
    if sample is None:
        return dict(ex.attrs)
    ex_dtype = np.asarray(sample[0] if isinstance(sample, (list, tuple)) else sample).dtype
    code = {v: k for k, v in NP_OF_SHORT.items()}
    dml_code = int(getattr(dml, "DML_TENSOR_DATA_TYPE_" + t))
    kinds = {f["name"]: f["type"] for f in OPERATORS[name]["fields"]}
    attrs = dict(ex.attrs)
    for key, value in attrs.items():
        if kinds.get(key) == "DML_TENSOR_DATA_TYPE" and ex_dtype in code and \
                int(value) == int(getattr(dml, "DML_TENSOR_DATA_TYPE_" + code[ex_dtype])):
            attrs[key] = dml_code
        elif isinstance(value, np.generic) and value.dtype == ex_dtype:
            attrs[key] = np.asarray(value).astype(NP_OF_SHORT[t])[()]
    return attrs


def _int_expected(ref, dtype):
    """(comparable, in range, wrapped, saturated) for an integer output of ``dtype``."""
    info = ml_dtypes.iinfo(dtype)
    bits = info.bits
    ok = np.isfinite(ref) & (np.abs(ref) < 2.0**53)
    vals = [int(v) for v in np.trunc(np.where(ok, ref, 0.0)).reshape(-1)]
    in_range = np.array([info.min <= v <= info.max for v in vals], bool).reshape(ref.shape)

    def wrap(v):
        v %= 2**bits
        return v - 2**bits if info.min < 0 and v >= 2**(bits - 1) else v

    wrapped = np.array([wrap(v) for v in vals], dtype).reshape(ref.shape)
    saturated = np.array([min(max(v, info.min), info.max) for v in vals], dtype).reshape(ref.shape)
    return ok, in_range, wrapped, saturated


def compare_bounded(got, ref, bound, what):
    """|got - ref| <= bound + one spacing of the output type at ref (its final rounding);
    NaN exactly where the reference is NaN, infinities exact."""
    ref = ref.astype(np.float64)
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    assert (nan_g == nan_r).all(), f"{what}: NaN positions differ"
    inf = np.isinf(ref) | np.isinf(got.astype(np.float64))
    assert (got[inf & ~nan_r] == ref[inf & ~nan_r]).all(), f"{what}: infinities differ"
    keep = ~nan_r & ~inf
    g, r = got[keep].astype(np.float64), ref[keep]
    allowed = np.broadcast_to(bound, ref.shape)[keep] + \
        np.spacing(np.abs(r).astype(got.dtype)).astype(np.float64)
    bad = np.abs(g - r) > allowed
    if bad.any():
        raise AssertionError(f"{what}: {int(bad.sum())} elements off by more than the bound: "
                             f"got {g[bad][:4]!r}, reference {r[bad][:4]!r}, bound "
                             f"{allowed[bad][:4]!r}")


def compare_output(opdef, field, got, ref, what, saturate=False, bound=None):
    got = np.asarray(got)
    ref = np.broadcast_to(np.asarray(ref), got.shape)
    if bound is not None and got.dtype.kind == "f":
        return compare_bounded(got, ref, bound, what)
    if got.dtype.kind in "iub" and ref.dtype.kind in "iub":
        # The reference computed in an integer type: the answer itself, exactly.
        assert_bits_equal(got, ref.astype(got.dtype), what)
        return
    ref = ref.astype(np.float64)
    if got.dtype.kind == "f":
        short = {2: "FLOAT16", 4: "FLOAT32", 8: "FLOAT64"}[got.dtype.itemsize]
        want = ref.astype(got.dtype)
        tiny = np.finfo(got.dtype).tiny
        flushed = (np.abs(want) < tiny) & (got == 0)  # FTZ: a subnormal result may be 0
        want = np.where(flushed, got, want).astype(got.dtype)
        assert_float_close(got, want, tolerance(opdef, short, 1), what)
        return
    ok, in_range, wrapped, saturated = _int_expected(ref, got.dtype)
    assert ok.mean() >= 0.25, f"{what}: the float64 reference is exact for too few elements"
    bad = ok & (got != (saturated if saturate else np.where(in_range, saturated, wrapped)))
    if bad.any():
        raise AssertionError(f"{what}: {int(bad.sum())} of {got.size} elements differ: got "
                             f"{got[bad][:6]!r}, reference {ref[bad][:6]!r}")


def _float_step(name, spec) -> bool:
    """True when the desc carries a float-only step: a FLOAT attribute or a ScaleBias."""
    kinds = {f["name"]: f.get("schema_type") for f in OPERATORS[name]["fields"]}
    return any(kinds.get(k) in ("float", "float_array", "scale_bias") and v is not None
               for k, v in spec.attrs)


_DEVICE = {}


def _rejects(desc) -> bool:
    """True when CreateOperator refuses ``desc`` with E_INVALIDARG (at 6_4)."""
    if "dev" not in _DEVICE:
        with feature_level(MAX_LEVEL):
            _DEVICE["dev"] = dml.DMLCreateDevice(dml.D3D12CreateDevice(None))
    try:
        _DEVICE["dev"].CreateOperator(desc)
    except dml.HResultError as err:
        assert err.hresult == dml.E_INVALIDARG, err
        return True
    return False


@pytest.fixture(autouse=True, scope="module")
def _max_level():
    with feature_level(MAX_LEVEL):
        yield


@pytest.mark.parametrize("case", CASES, ids=[f"{n.replace('DML_OPERATOR_', '')}-{t}"
                                              for n, t in CASES])
def test_kernel_matches_float64_reference(case):
    name, t = case
    opdef = REGISTRY[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}-{t}".encode()))
    with np.errstate(all="ignore"):  # casts of NaN bits and out-of-range attributes
        _check(name, t, opdef, rng)


def _check(name, t, opdef, rng):
    try:
        desc, flat_in, inputs, outputs = build_case(name, t, rng)
        generic_ok = not (flat_in and _rejects(desc))
    except dml.HResultError:  # a rule the generic shape breaks (SOFTMAX's rank) refused it
        generic_ok = False
    if not generic_ok:
        desc, flat_in, inputs, outputs = build_case(name, t, rng, generic=False)
    result = dml.run(desc, *flat_in)
    results = result if isinstance(result, list) else [result]
    spec = validation.operator_desc(desc, BY_VALUE)
    ctx = registry.KernelContext.of(spec, 0, MAX_LEVEL)
    ref = dict(zip(OPERATORS[name]["outputs"], opdef.run_reference(dict(inputs), spec, ctx)))
    flat_fields = []
    for field in OPERATORS[name]["outputs"]:
        value = outputs.get(field)
        if isinstance(value, list):
            flat_fields.extend((field, i) for i in range(len(value)))
        else:
            flat_fields.append((field, None))
    for (field, idx), got in zip(flat_fields, results):
        if got is None:
            continue
        assert ref.get(field) is not None, f"{name}: the reference omits output {field}"
        r = ref[field] if idx is None else ref[field][idx]
        bound = None
        if opdef.error_bound is not None:
            bound = opdef.error_bound(dict(inputs), spec, np.asarray(got).dtype)
            if isinstance(bound, dict):  # a bound per output field
                bound = bound.get(field)
            elif field != OPERATORS[name]["outputs"][0]:  # one bound: the first output's
                bound = None
        compare_output(opdef, field, got, r, f"{name} {t} {field}", _float_step(name, spec),
                       bound)


def test_cases_cover_every_seed_type():
    """The derivation above yields every 6_4 type of the six seed operators."""
    got = {}
    for n, t in CASES:
        got.setdefault(n.replace("DML_OPERATOR_", ""), set()).add(t)
    ints = {"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64"}
    assert got["ELEMENT_WISE_ADD"] == {"FLOAT32", "FLOAT16"} | ints
    assert got["ELEMENT_WISE_MULTIPLY"] == {"FLOAT32", "FLOAT16"} | ints
    assert got["ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL"] == {"FLOAT32", "FLOAT16"} | ints
    assert got["ELEMENT_WISE_IDENTITY"] == {"FLOAT64", "FLOAT32", "FLOAT16"} | ints
    assert got["ELEMENT_WISE_IS_INFINITY"] == {"FLOAT32", "FLOAT16"}
    assert got["ACTIVATION_SHRINK"] == {"FLOAT32", "FLOAT16"} | (ints - {"INT64", "UINT64"})


def test_integer_comparison_is_not_vacuous():
    """A wrong integer result is caught; out-of-range values wrap, or saturate after a
    float-only step."""
    opdef = REGISTRY["DML_OPERATOR_ELEMENT_WISE_ADD"]
    ref = np.array([260.0, 3.0, -1.0])
    compare_output(opdef, "OutputTensor", np.uint8([4, 3, 255]), ref, "wrap")
    compare_output(opdef, "OutputTensor", np.uint8([255, 3, 0]), ref, "saturate", saturate=True)
    with pytest.raises(AssertionError):
        compare_output(opdef, "OutputTensor", np.uint8([255, 3, 0]), ref, "saturated, not wrapped")
    with pytest.raises(AssertionError):
        compare_output(opdef, "OutputTensor", np.uint8([4, 3, 255]), ref, "w", saturate=True)
    with pytest.raises(AssertionError):
        compare_output(opdef, "OutputTensor", np.uint8([4, 2, 255]), ref, "wrong")
    with pytest.raises(AssertionError):
        compare_output(opdef, "OutputTensor", np.float32([1, 2]), np.array([1.0, 2.5]), "f")
