"""Lowering rules for ONNX's element-wise operators and activations (the other families are in
``onnx_rules_nn`` and ``onnx_rules_shape``). A rule is ``rule(L, node, ins, attrs, act)`` -> a
Value or a list of Values: ``L`` the Lowering, ``ins`` the input Values (None for omitted
optional inputs), ``attrs`` the node's attributes, ``act`` the FusedActivation folded into this
node (or None). The DML operator each becomes is the one ONNX Runtime's DirectML provider uses.
Broadcasting reads inputs through zero strides; bool results are UINT8 tensors."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_functions import FusedActivation
from .onnx_lower import Value, dml_type, fail

X = F.all_functions()


def out_shape(*shapes):
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def binary(fn_name, out_bool=False):
    def rule(L, node, ins, attrs, act):
        a, b = ins[0], ins[1]
        shape = out_shape(a.shape, b.shape)
        ea, eb = L.broadcast(a, shape), L.broadcast(b, shape)
        e = F.Add(ea, eb, act) if fn_name == "Add" else X[fn_name](ea, eb)
        return L.new(e, shape, np.bool_ if out_bool else a.dtype)
    return rule


def unary(fn_name, out_bool=False, **kw):
    def rule(L, node, ins, attrs, act):
        v = ins[0]
        return L.new(X[fn_name](L.tensor(v), **kw), v.shape, np.bool_ if out_bool else v.dtype)
    return rule


def activation(dml_name, params):
    """(rule, fused): ``params`` maps ONNX attribute -> (DML field, ONNX default)."""
    def fused(node, L):
        given = {a.name: a.f for a in node.attribute}
        return FusedActivation(dml_name, **{field: float(given.get(name, default))
                                            for name, (field, default) in params.items()})

    fn = X["Activation" + "".join(w.title() for w in dml_name.split("_"))]

    def rule(L, node, ins, attrs, act):
        v = ins[0]
        return L.new(fn(L.tensor(v), **fused(node, L).params), v.shape, v.dtype)
    return rule, fused


ACT_TABLE = {
    "Relu": ("RELU", {}), "Sigmoid": ("SIGMOID", {}), "Tanh": ("TANH", {}),
    "Softsign": ("SOFTSIGN", {}), "Softplus": ("SOFTPLUS", {"__": ("Steepness", 1.0)}),
    "LeakyRelu": ("LEAKY_RELU", {"alpha": ("Alpha", 0.01)}),
    "Elu": ("ELU", {"alpha": ("Alpha", 1.0)}),
    "Celu": ("CELU", {"alpha": ("Alpha", 1.0)}),
    "Selu": ("SCALED_ELU", {"alpha": ("Alpha", 1.67326319217681884765625),
                            "gamma": ("Gamma", 1.05070102214813232421875)}),
    "HardSigmoid": ("HARD_SIGMOID", {"alpha": ("Alpha", 0.2), "beta": ("Beta", 0.5)}),
    "ThresholdedRelu": ("THRESHOLDED_RELU", {"alpha": ("Alpha", 1.0)}),
    "Shrink": ("SHRINK", {"bias": ("Bias", 0.0), "lambd": ("Threshold", 0.5)}),
    "HardSwish": ("HARD_SWISH", {"__alpha": ("Alpha", 1 / 6), "__beta": ("Beta", 0.5)}),
}
RULES: dict = {}
ACTIVATIONS: dict = {}  # ONNX op -> fused(node, L): the FusedActivation it folds into
for _onnx, (_dml, _params) in ACT_TABLE.items():
    RULES[_onnx], ACTIVATIONS[_onnx] = activation(_dml, _params)


def _gelu(L, node, ins, attrs, act):
    if attrs.get("approximate", b"none") not in (b"none", "none"):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: approximate='tanh' has no DML operator "
                            "(ACTIVATION_GELU is the erf form)")
    return L.new(X["ActivationGelu"](L.tensor(ins[0])), ins[0].shape, ins[0].dtype)


# ACTIVATION_GELU is the erf form; the tanh approximation goes through Gelu's function body
_gelu.takes = lambda node, types: all(a.s in (b"", b"none") for a in node.attribute
                                      if a.name == "approximate")


for _onnx, _fn in {"Add": "Add", "Sub": "Subtract", "Mul": "Multiply", "Div": "Divide",
                   "BitwiseAnd": "BitAnd", "BitwiseOr": "BitOr",
                   "BitwiseXor": "BitXor"}.items():
    RULES[_onnx] = binary(_fn)
for _onnx, _fn in {"Equal": "Equals", "Greater": "GreaterThan", "Less": "LessThan",
                   "GreaterOrEqual": "GreaterThanOrEqual", "LessOrEqual": "LessThanOrEqual",
                   "And": "LogicalAnd", "Or": "LogicalOr", "Xor": "LogicalXor"}.items():
    RULES[_onnx] = binary(_fn, out_bool=True)
for _onnx, _fn in {"Sqrt": "Sqrt", "Exp": "Exp", "Log": "Log", "Abs": "Abs", "Neg": "Negate",
                   "Reciprocal": "Recip", "Floor": "Floor", "Ceil": "Ceil", "Erf": "Erf",
                   "Sin": "Sin", "Cos": "Cos", "Tan": "Tan", "Asin": "Asin", "Acos": "Acos",
                   "Atan": "Atan", "Sinh": "Sinh", "Cosh": "Cosh", "Asinh": "Asinh",
                   "Acosh": "Acosh", "Atanh": "Atanh", "Sign": "Sign", "BitwiseNot": "BitNot",
                   "Identity": "Identity"}.items():
    RULES[_onnx] = unary(_fn)
RULES.update(Gelu=_gelu, Round=unary("Round", RoundingMode=0), Not=unary("Not", True),
             IsNaN=unary("IsNaN", True))


def _dropout(L, node, ins, attrs, act):
    """Inference: IDENTITY, and a mask of ones when asked for (training_mode must be false)."""
    x = ins[0]
    if len(ins) > 2 and ins[2] is not None:
        training = L.constant(node.input[2], node, "training_mode")
        if bool(np.asarray(training).reshape(())):
            fail(dml.E_NOTIMPL, f"{L.label(node)}: training_mode=true (random dropout)")
    out = [L.new(X["Identity"](L.tensor(x)), x.shape, x.dtype)]
    if len(node.output) > 1 and node.output[1]:
        ones = F.FillValueConstant(L.graph, [int(s) for s in x.shape] or [1],
                                   dml.DML_TENSOR_DATA_TYPE_UINT8, 1)
        out.append(L.new(ones, x.shape, np.bool_))
    return out


def _isinf(L, node, ins, attrs, act):
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    mode = 0 if pos and neg else (1 if pos else 2)  # DML_IS_INFINITY_MODE EITHER/POS/NEG
    return L.new(X["IsInfinity"](L.tensor(ins[0]), mode), ins[0].shape, np.bool_)


def _mod(L, node, ins, attrs, act):
    fn = "ModulusTruncate" if attrs.get("fmod", 0) else "ModulusFloor"
    return binary(fn)(L, node, ins, attrs, act)


def _bitshift(L, node, ins, attrs, act):
    left = attrs.get("direction", b"LEFT") in (b"LEFT", "LEFT")
    return binary("BitShiftLeft" if left else "BitShiftRight")(L, node, ins, attrs, act)


def _pow(L, node, ins, attrs, act):
    x, y = ins
    if y.const is not None and y.const.size == 1 and x.dtype.kind == "f":
        return L.new(F.Pow(L.tensor(x), float(y.const.reshape(()))), x.shape, x.dtype)
    shape = out_shape(x.shape, y.shape)
    return L.new(F.Pow(L.broadcast(x, shape), L.broadcast(y, shape)), shape, x.dtype)


def nary(fn_name, mean=False):
    """Sum/Max/Min/Mean: pairwise (the provider chains them), Mean then scales by 1/n."""
    def rule(L, node, ins, attrs, act):
        vals = [v for v in ins if v is not None]
        shape = out_shape(*[v.shape for v in vals])
        e = L.broadcast(vals[0], shape)
        if len(vals) == 1:
            e = X["Identity"](e)
        for v in vals[1:]:
            e = X[fn_name](e, L.broadcast(v, shape))
        if mean:
            e = X["Identity"](e, dml.DML_SCALE_BIAS(1.0 / len(vals), 0.0))
        return L.new(e, shape, vals[0].dtype)
    return rule


def _prelu(L, node, ins, attrs, act):
    """PARAMETERIZED_RELU with the slope broadcast to X. Before opset 7 the slope is per
    channel (axis 1, what PyTorch's exporter relied on), not numpy-broadcast."""
    x, slope = ins
    opset = next((o.version for o in L.model.opset_import if o.domain in ("", "ai.onnx")), 1)
    if opset < 7 and len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] == \
            x.shape[1] != 1:
        shape = (slope.shape[0],) + (1,) * (len(x.shape) - 2)
        slope = Value(shape, slope.dtype, None if slope.const is None else
                      slope.const.reshape(shape), slope.expr)
    return L.new(X["ActivationParameterizedRelu"](L.tensor(x), L.broadcast(slope, x.shape)),
                 x.shape, x.dtype)


def _where(L, node, ins, attrs, act):
    c, a, b = ins
    shape = out_shape(c.shape, a.shape, b.shape)
    e = X["If"](L.broadcast(c, shape), L.broadcast(a, shape), L.broadcast(b, shape))
    return L.new(e, shape, a.dtype)


def _clip(L, node, ins, attrs, act):
    """CLIP1 (FL 5_0) with its MinMaxDataType; min/max from attributes (opset < 11) or from
    constant inputs."""
    x = ins[0]
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
    lo, hi = attrs.get("min", info.min), attrs.get("max", info.max)
    if len(ins) > 1 and ins[1] is not None:
        lo = L.constant(node.input[1], node, "min").reshape(())
    if len(ins) > 2 and ins[2] is not None:
        hi = L.constant(node.input[2], node, "max").reshape(())
    if lo > hi:  # ONNX: every element becomes max; DML's max(Min, min(x, Max)) would give Min
        lo = hi
    e = X["Clip1"](L.tensor(x), MinMaxDataType=dml_type(x.dtype), Min=x.dtype.type(lo),
                   Max=x.dtype.type(hi))
    return L.new(e, x.shape, x.dtype)


def _per_axis(L, v, x, axis):
    """A scale or zero point (scalar, or 1-D along ``axis``) read with ``x``'s sizes."""
    if len(v.shape) == 1 and v.shape[0] != 1:
        shape = [1] * len(x.shape)
        shape[axis] = v.shape[0]
        v = Value(tuple(shape), v.dtype, None if v.const is None else v.const.reshape(shape),
                  v.expr)
    return L.broadcast(v, x.shape)


def _quantized_type(attrs, zp):
    """QuantizeLinear's output type: the zero point's, else output_dtype (opset 21), else
    UINT8 (the spec's default)."""
    if zp is not None:
        return zp.dtype
    if attrs.get("output_dtype"):
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(attrs["output_dtype"])))
    return np.dtype(np.uint8)


def _blocked(L, node, x, scale, zp, axis, block, dequantize, attrs):
    """Blocked quantization (opset 21 block_size) onto QUANTIZE / DEQUANTIZE (FL 6_3): the
    scale and zero point have x's rank, x.shape[axis] / block_size values along the axis."""
    if x.shape[axis] % block:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: block_size {block} does not divide the axis "
                            f"size {x.shape[axis]}; DML's blocks must tile it")
    qt = [L.tensor(scale, node.input[1])] + ([] if zp is None else
                                             [L.tensor(zp, node.input[2])])
    return _onto_quantize(L, x, qt, scale, zp, dequantize, attrs)


def _onto_quantize(L, x, qt, scale, zp, dequantize, attrs):
    """QUANTIZE / DEQUANTIZE (FL 6_3) of ``x`` with QuantizationTensors ``qt``."""
    kind = 2 if zp is not None else 1  # DML_QUANTIZATION_TYPE_SCALE(_ZERO_POINT)
    if dequantize:
        y = X["Dequantize"](L.tensor(x), qt, QuantizationType=kind,
                            outputDataType=dml_type(scale.dtype))
        return L.new(y, x.shape, scale.dtype)
    out = _quantized_type(attrs, zp)
    y = X["Quantize"](L.tensor(x), qt, QuantizationType=kind, outputDataType=dml_type(out))
    return L.new(y, x.shape, out)


def _quantize(dequantize):
    """QuantizeLinear / DequantizeLinear onto ELEMENT_WISE_(DE)QUANTIZE_LINEAR; blocked ones
    and the packed 4-bit types (which only QUANTIZE / DEQUANTIZE's tables list) onto
    QUANTIZE / DEQUANTIZE."""
    def rule(L, node, ins, attrs, act):
        x, scale = ins[0], ins[1]
        zp = ins[2] if len(ins) > 2 else None
        axis = L.axis(attrs.get("axis", 1), len(x.shape)) if x.shape else 0
        if attrs.get("block_size", 0):
            return _blocked(L, node, x, scale, zp, axis, int(attrs["block_size"]), dequantize,
                            attrs)
        es = _per_axis(L, scale, x, axis)
        ez = None if zp is None else _per_axis(L, zp, x, axis)
        integer = x.dtype if dequantize else _quantized_type(attrs, zp)
        if dml_type(integer) in (dml.DML_TENSOR_DATA_TYPE_INT4, dml.DML_TENSOR_DATA_TYPE_UINT4):
            return _onto_quantize(L, x, [es] + ([] if ez is None else [ez]), scale, zp,
                                  dequantize, attrs)
        if dequantize:
            y = X["DequantizeLinear"](L.tensor(x), es, ez)
            return L.new(y, x.shape, scale.dtype)
        out = _quantized_type(attrs, zp)
        y = X["QuantizeLinear"](L.tensor(x), es, ez, outputDataType=dml_type(out))
        return L.new(y, x.shape, out)
    return rule


def _lp_norm(L, node, ins, attrs, act):
    x = ins[0]
    y = X["LpNormalization"](L.tensor(x), Axis=L.axis(attrs.get("axis", -1), len(x.shape)),
                             Epsilon=1e-30, P=int(attrs.get("p", 2)))
    return L.new(y, x.shape, x.dtype)


def _cast(L, node, ins, attrs, act):
    to = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
    return L.new(F.Cast(L.tensor(ins[0]), dml_type(to)), ins[0].shape, to)


def _softmax(fn_name):
    """SOFTMAX1 / LOG_SOFTMAX1 / HARDMAX1 (FL 5_1): opset 13+ one axis, earlier ones the axes
    from ``axis`` to the last (the input coerced to 2-D)."""
    def rule(L, node, ins, attrs, act):
        v = ins[0]
        rank = len(v.shape)
        default = -1 if L.opset >= 13 else 1
        axis = L.axis(attrs.get("axis", default), rank)
        axes = [axis] if L.opset >= 13 else list(range(axis, rank))
        return L.new(X[fn_name](L.tensor(v), Axes=axes), v.shape, v.dtype)
    return rule


RULES.update(QuantizeLinear=_quantize(False), DequantizeLinear=_quantize(True),
             LpNormalization=_lp_norm, Dropout=_dropout, IsInf=_isinf, Mod=_mod,
             BitShift=_bitshift, Pow=_pow, Sum=nary("Add"), Max=nary("Max"), Min=nary("Min"),
             Mean=nary("Add", mean=True), PRelu=_prelu, Where=_where, Clip=_clip, Cast=_cast,
             Softmax=_softmax("ActivationSoftmax1"),
             LogSoftmax=_softmax("ActivationLogSoftmax1"),
             Hardmax=_softmax("ActivationHardmax1"))

__all__ = ["RULES", "ACTIVATIONS", "X", "out_shape", "Value"]
