"""dmlx functions with DirectMLX's own signatures and defaults (DirectMLX.h, written anew):
the fused-activation factories, the operators whose DirectMLX form differs from the plain
"inputs, then the desc's attributes" rule of ``dmlx_ops.generic``, and the fluent builders.

Where DirectMLX picks an operator version (Slice -> SLICE1, MaxPooling -> MAX_POOLING2,
AveragePooling -> AVERAGE_POOLING1, Resample -> RESAMPLE2/3, TopK -> TOP_K1, Add with a
fused activation -> ELEMENT_WISE_ADD1), dmlx picks the same. Output descs come from the
operators' shape rules, never from a second formula here (DirectMLX's TopK sets the last
dimension to K whatever the axis; dmlx's follows the axis, as the operator does).
"""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from .._core import dtypes
from .dmlx_graph import Expression, TensorDesc, _fail
from .dmlx_ops import dmlx_name, generated, generic, make_node
from .run import operator_desc

# DirectMLX's positional order and defaults where they differ from the desc's field order.
SIGNATURES = {
    "ELEMENT_WISE_THRESHOLD": (["Min", "ScaleBias"], {}),
    "ELEMENT_WISE_CLIP": (["Min", "Max", "ScaleBias"], {}),
    "ELEMENT_WISE_ROUND": (["RoundingMode"], {"RoundingMode": 0}),
    "ELEMENT_WISE_IS_INFINITY": (["InfinityMode"], {"InfinityMode": 0}),
    "ACTIVATION_ELU": (["Alpha"], {"Alpha": 1.0}),
    "ACTIVATION_CELU": (["Alpha"], {"Alpha": 1.0}),
    "ACTIVATION_HARD_SIGMOID": (["Alpha", "Beta"], {"Alpha": 0.2, "Beta": 0.5}),
    "ACTIVATION_LEAKY_RELU": (["Alpha"], {"Alpha": 0.01}),
    "ACTIVATION_SCALED_ELU": (["Alpha", "Gamma"], {"Alpha": 1.67326319217681884765625,
                                                   "Gamma": 1.05070102214813232421875}),
    "ACTIVATION_SCALED_TANH": (["Alpha", "Beta"], {"Alpha": 1.0, "Beta": 0.5}),
    "ACTIVATION_SOFTPLUS": (["Steepness"], {"Steepness": 1.0}),
    "ACTIVATION_THRESHOLDED_RELU": (["Alpha"], {"Alpha": 1.0}),
    "ACTIVATION_SHRINK": (["Bias", "Threshold"], {"Bias": 0.0, "Threshold": 0.5}),
    "DEPTH_TO_SPACE1": (["BlockSize", "Order"], {"Order": 0}),
    "SPACE_TO_DEPTH1": (["BlockSize", "Order"], {"Order": 0}),
    "CUMULATIVE_SUMMATION": (["Axis", "AxisDirection", "HasExclusiveSum"],
                             {"AxisDirection": 0, "HasExclusiveSum": 0}),
    "CUMULATIVE_PRODUCT": (["Axis", "AxisDirection", "HasExclusiveProduct"],
                           {"AxisDirection": 0, "HasExclusiveProduct": 0}),
    "UPSAMPLE_2D": (["ScaleSize", "InterpolationMode"], {}),
}
_DMLX_NAMES = {"DEPTH_TO_SPACE1": "DepthToSpace", "SPACE_TO_DEPTH1": "SpaceToDepth"}


def signature_functions() -> dict:
    """The SIGNATURES functions by their DirectMLX names (the versioned ones also under the
    versioned name)."""
    out = {}
    for op, (params, defaults) in SIGNATURES.items():
        full = "DML_OPERATOR_" + op
        name = _DMLX_NAMES.get(op, dmlx_name(full))
        out[name] = generic(full, params, defaults, name)
        out[dmlx_name(full)] = out[name]
    return out


class FusedActivation:
    """DirectMLX's FusedActivation: an activation folded into the operator before it.
    ``FusedActivation.Relu()``, ``.LeakyRelu(alpha=0.01)``, ... with DirectMLX's defaults;
    ``FusedActivation.None_()`` (``None`` is a Python keyword) for none."""

    def __init__(self, activation=None, **params):
        self.activation, self.params = activation, params

    def AsDml(self):
        if self.activation is None:
            return None
        return operator_desc("ACTIVATION_" + self.activation, **self.params)

    def __repr__(self):
        return f"FusedActivation({self.activation or 'None'}, {self.params})"

    @staticmethod
    def None_():
        return FusedActivation()

    @staticmethod
    def Elu(alpha=1.0):
        return FusedActivation("ELU", Alpha=alpha)

    @staticmethod
    def HardSigmoid(alpha=0.2, beta=0.5):
        return FusedActivation("HARD_SIGMOID", Alpha=alpha, Beta=beta)

    @staticmethod
    def Identity():
        return FusedActivation("IDENTITY")

    @staticmethod
    def LeakyRelu(alpha=0.01):
        return FusedActivation("LEAKY_RELU", Alpha=alpha)

    @staticmethod
    def Linear(alpha, beta):
        return FusedActivation("LINEAR", Alpha=alpha, Beta=beta)

    @staticmethod
    def ParametricSoftplus(alpha, beta):
        return FusedActivation("PARAMETRIC_SOFTPLUS", Alpha=alpha, Beta=beta)

    @staticmethod
    def Relu():
        return FusedActivation("RELU")

    @staticmethod
    def ScaledElu(alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
        return FusedActivation("SCALED_ELU", Alpha=alpha, Gamma=gamma)

    @staticmethod
    def ScaledTanh(alpha=1.0, beta=0.5):
        return FusedActivation("SCALED_TANH", Alpha=alpha, Beta=beta)

    @staticmethod
    def Sigmoid():
        return FusedActivation("SIGMOID")

    @staticmethod
    def Softplus(steepness=1.0):
        return FusedActivation("SOFTPLUS", Steepness=steepness)

    @staticmethod
    def Softsign():
        return FusedActivation("SOFTSIGN")

    @staticmethod
    def Tanh():
        return FusedActivation("TANH")

    @staticmethod
    def ThresholdedRelu(alpha=1.0):
        return FusedActivation("THRESHOLDED_RELU", Alpha=alpha)

    @staticmethod
    def Shrink(bias=0.0, threshold=0.5):
        return FusedActivation("SHRINK", Bias=bias, Threshold=threshold)

    @staticmethod
    def Celu(alpha=1.0):
        return FusedActivation("CELU", Alpha=alpha)

    @staticmethod
    def Gelu():
        return FusedActivation("GELU")


def _fused(value):
    return value.AsDml() if isinstance(value, FusedActivation) else value


def _desc(graph, data_type, sizes, policy=None):
    return TensorDesc.make(data_type, sizes, policy or graph.policy)


def _ones(n, value=1):
    return [value] * n


def _spatial(x):
    return len(x.GetOutputDesc().sizes) - 2


def Add(a, b, fusedActivation=None):
    """ELEMENT_WISE_ADD, or ELEMENT_WISE_ADD1 with a fused activation."""
    act = _fused(fusedActivation)
    if act is None:
        return make_node("Add", "ELEMENT_WISE_ADD", {"ATensor": a, "BTensor": b}, {})[0]
    return make_node("Add", "ELEMENT_WISE_ADD1", {"ATensor": a, "BTensor": b},
                     {"FusedActivation": act})[0]


def Convolution(input, filter, bias=None, mode=dml.DML_CONVOLUTION_MODE_CROSS_CORRELATION,
                direction=dml.DML_CONVOLUTION_DIRECTION_FORWARD, strides=(), dilations=(),
                startPadding=(), endPadding=(), outputPadding=(), groupCount=1,
                fusedActivation=None, outputSizes=()):
    """CONVOLUTION; empty strides/dilations default to 1, paddings to 0 (per spatial dim)."""
    n = _spatial(input)
    attrs = {"Mode": mode, "Direction": direction, "DimensionCount": n,
             "Strides": list(strides) or _ones(n), "Dilations": list(dilations) or _ones(n),
             "StartPadding": list(startPadding) or _ones(n, 0),
             "EndPadding": list(endPadding) or _ones(n, 0),
             "OutputPadding": list(outputPadding) or _ones(n, 0), "GroupCount": groupCount,
             "FusedActivation": _fused(fusedActivation)}
    outs = {"OutputTensor": _desc(input.graph, input.GetOutputDesc().dataType, outputSizes)} \
        if len(outputSizes) else None
    return make_node("Convolution", "CONVOLUTION", {"InputTensor": input, "FilterTensor": filter,
                                                    "BiasTensor": bias}, attrs, outs)[0]


def Gemm(a, b, c=None, transA=dml.DML_MATRIX_TRANSFORM_NONE,
         transB=dml.DML_MATRIX_TRANSFORM_NONE, alpha=1.0, beta=1.0, fusedActivation=None):
    """GEMM: alpha * op(A) x op(B) + beta * C."""
    return make_node("Gemm", "GEMM", {"ATensor": a, "BTensor": b, "CTensor": c},
                     {"TransA": transA, "TransB": transB, "Alpha": alpha, "Beta": beta,
                      "FusedActivation": _fused(fusedActivation)})[0]


def Reduce(input, function, axes=(), outputDataType=dml.DML_TENSOR_DATA_TYPE_UNKNOWN):
    """REDUCE over ``axes`` (empty: all); ARGMIN/ARGMAX give UINT32 unless told."""
    axes = list(axes) or list(range(len(input.GetOutputDesc().sizes)))
    types = {"OutputTensor": outputDataType} if outputDataType else None
    return make_node("Reduce", "REDUCE", {"InputTensor": input},
                     {"Function": function, "Axes": axes}, want=("OutputTensor",),
                     out_types=types)[0]


def AveragePooling(input, strides, windowSizes, startPadding, endPadding, dilations=(),
                   includePadding=False, outputSizes=()):
    """AVERAGE_POOLING1 (DirectMLX for FL 6_2+); empty dilations default to 1."""
    n = len(windowSizes)
    outs = {"OutputTensor": _desc(input.graph, input.GetOutputDesc().dataType, outputSizes)} \
        if len(outputSizes) else None
    return make_node("AveragePooling", "AVERAGE_POOLING1", {"InputTensor": input},
                     {"DimensionCount": n, "Strides": list(strides),
                      "WindowSize": list(windowSizes), "StartPadding": list(startPadding),
                      "EndPadding": list(endPadding), "Dilations": list(dilations) or _ones(n),
                      "IncludePadding": int(bool(includePadding))}, outs)[0]


def MaxPooling(input, windowSize, strides=(), startPadding=(), endPadding=(), dilations=(),
               outputIndices=False, outputSizes=()):
    """MAX_POOLING2 -> (values, indices); indices (UINT32) only with ``outputIndices``."""
    n = len(windowSize)
    attrs = {"DimensionCount": n, "Strides": list(strides) or _ones(n),
             "WindowSize": list(windowSize), "StartPadding": list(startPadding) or _ones(n, 0),
             "EndPadding": list(endPadding) or _ones(n, 0),
             "Dilations": list(dilations) or _ones(n)}
    outs = {}
    if len(outputSizes):
        outs["OutputTensor"] = _desc(input.graph, input.GetOutputDesc().dataType, outputSizes)
        if outputIndices:
            outs["OutputIndicesTensor"] = _desc(input.graph, dml.DML_TENSOR_DATA_TYPE_UINT32,
                                                outputSizes)
    values, indices = make_node(
        "MaxPooling", "MAX_POOLING2", {"InputTensor": input}, attrs, outs,
        want=("OutputIndicesTensor",) if outputIndices else (),
        out_types={"OutputIndicesTensor": dml.DML_TENSOR_DATA_TYPE_UINT32})
    return values, indices


def Slice(input, inputWindowOffsets, inputWindowSizes, inputWindowStrides):
    """SLICE1 (negative strides reverse)."""
    return make_node("Slice", "SLICE1", {"InputTensor": input},
                     {"InputWindowOffsets": list(inputWindowOffsets),
                      "InputWindowSizes": list(inputWindowSizes),
                      "InputWindowStrides": list(inputWindowStrides)})[0]


def Cast(input, targetDataType):
    """CAST to ``targetDataType``."""
    d = input.GetOutputDesc()
    return make_node("Cast", "CAST", {"InputTensor": input}, {},
                     {"OutputTensor": _desc(input.graph, targetDataType, d.sizes)})[0]


def Split(input, axis, outputAxisSizes):
    """SPLIT along ``axis`` into pieces of ``outputAxisSizes``: a list of Expressions."""
    d = input.GetOutputDesc()
    outs = []
    for s in outputAxisSizes:
        sizes = list(d.sizes)
        if not 0 <= axis < len(sizes):
            _fail("Split", f"axis {axis} is out of range for sizes {list(d.sizes)}")
        sizes[axis] = int(s)
        outs.append(_desc(input.graph, d.dataType, sizes))
    return make_node("Split", "SPLIT", {"InputTensor": input}, {"Axis": axis},
                     {"OutputTensors": outs})[0]


def Join(inputs, axis):
    """JOIN of ``inputs`` (a list of Expressions) along ``axis``."""
    if not inputs:
        _fail("Join", "inputs is empty")
    return make_node("Join", "JOIN", {"InputTensors": list(inputs)}, {"Axis": axis})[0]


def Padding(input, paddingMode, paddingValue, startPadding, endPadding):
    """PADDING (constant, edge, reflection, symmetric)."""
    return make_node("Padding", "PADDING", {"InputTensor": input},
                     {"PaddingMode": paddingMode, "PaddingValue": float(paddingValue),
                      "StartPadding": list(startPadding), "EndPadding": list(endPadding)})[0]


def Upsample2D(input, scaleSize, interpolationMode):
    """UPSAMPLE_2D; ``scaleSize`` a DML_SIZE_2D or (Width, Height)."""
    return make_node("Upsample2D", "UPSAMPLE_2D", {"InputTensor": input},
                     {"ScaleSize": scaleSize, "InterpolationMode": interpolationMode})[0]


def ValueScale2D(input, scale, bias):
    """VALUE_SCALE_2D: scale * x + bias[channel]."""
    return make_node("ValueScale2D", "VALUE_SCALE_2D", {"InputTensor": input},
                     {"Scale": float(scale), "ChannelCount": len(bias), "Bias": list(bias)})[0]


def Resample(input, outputSizes, mode, roundingDirection=dml.DML_AXIS_DIRECTION_INCREASING,
             scales=(), inputPixelOffsets=(), outputPixelOffsets=(), antialiased=False):
    """RESAMPLE2 (RESAMPLE3 when ``antialiased``); scales default to output/input, pixel
    offsets to 0.5 (input) and -0.5 (output): half-pixel centres, as DirectMLX."""
    d = input.GetOutputDesc()
    n = len(d.sizes)
    if len(outputSizes) != n:
        _fail("Resample", f"outputSizes {list(outputSizes)} has {len(outputSizes)} dimensions "
                          f"but the input has {n}")
    attrs = {"InterpolationMode": mode, "RoundingDirection": roundingDirection,
             "Scales": list(scales) or [o / i for o, i in zip(outputSizes, d.sizes)],
             "InputPixelOffsets": list(inputPixelOffsets) or _ones(n, 0.5),
             "OutputPixelOffsets": list(outputPixelOffsets) or _ones(n, -0.5)}
    op = "RESAMPLE2"
    if antialiased:
        op, attrs["Antialiased"] = "RESAMPLE3", 1
    return make_node("Resample", op, {"InputTensor": input}, attrs,
                     {"OutputTensor": _desc(input.graph, d.dataType, outputSizes)})[0]


def BatchNormalization(input, mean, variance, scale, bias, spatial, epsilon,
                       fusedActivation=None):
    """BATCH_NORMALIZATION."""
    return make_node("BatchNormalization", "BATCH_NORMALIZATION",
                     {"InputTensor": input, "MeanTensor": mean, "VarianceTensor": variance,
                      "ScaleTensor": scale, "BiasTensor": bias},
                     {"Spatial": int(bool(spatial)), "Epsilon": float(epsilon),
                      "FusedActivation": _fused(fusedActivation)})[0]


def MeanVarianceNormalization(input, scale, bias, axes, normalizeVariance, normalizeMean=True,
                              epsilon=1e-5, fusedActivation=None):
    """MEAN_VARIANCE_NORMALIZATION1; MEAN_VARIANCE_NORMALIZATION2 (FL 6_3) when
    ``normalizeMean`` is false (the one thing MVN1 cannot say)."""
    tensors = {"InputTensor": input, "ScaleTensor": scale, "BiasTensor": bias}
    common = {"Axes": list(axes), "Epsilon": float(epsilon),
              "FusedActivation": _fused(fusedActivation)}
    if normalizeMean:
        return make_node("MeanVarianceNormalization", "MEAN_VARIANCE_NORMALIZATION1", tensors,
                         dict(common, NormalizeVariance=int(bool(normalizeVariance))))[0]
    return make_node("MeanVarianceNormalization", "MEAN_VARIANCE_NORMALIZATION2", tensors,
                     dict(common, UseMean=0, UseVariance=int(bool(normalizeVariance))))[0]


def TopK(input, axis, k, axisDirection=dml.DML_AXIS_DIRECTION_DECREASING):
    """TOP_K1 -> (values, indices as UINT32)."""
    values, indices = make_node("TopK", "TOP_K1", {"InputTensor": input},
                                {"Axis": axis, "K": k, "AxisDirection": axisDirection},
                                out_types={"OutputIndexTensor": dml.DML_TENSOR_DATA_TYPE_UINT32})
    return values, indices


def _scalar(function, data_type, value):
    try:
        return dtypes.numpy_dtype(int(data_type)).type(value)
    except (TypeError, ValueError, OverflowError) as e:
        _fail(function, f"value {value!r} is not a {dml.DML_TENSOR_DATA_TYPE(data_type).name}: {e}")


def FillValueConstant(graph, outputSizes, valueDataType, value):
    """FILL_VALUE_CONSTANT: no input, so the graph comes first."""
    return make_node("FillValueConstant", "FILL_VALUE_CONSTANT", {},
                     {"ValueDataType": valueDataType,
                      "Value": _scalar("FillValueConstant", valueDataType, value)},
                     {"OutputTensor": _desc(graph, valueDataType, outputSizes)}, graph=graph)[0]


def FillValueSequence(graph, outputSizes, valueDataType, valueStart, valueDelta):
    """FILL_VALUE_SEQUENCE: start + i * delta."""
    return make_node("FillValueSequence", "FILL_VALUE_SEQUENCE", {},
                     {"ValueDataType": valueDataType,
                      "ValueStart": _scalar("FillValueSequence", valueDataType, valueStart),
                      "ValueDelta": _scalar("FillValueSequence", valueDataType, valueDelta)},
                     {"OutputTensor": _desc(graph, valueDataType, outputSizes)}, graph=graph)[0]


def Pow(input, exponent, scaleBias=None):
    """ELEMENT_WISE_POW with an Expression exponent, ELEMENT_WISE_CONSTANT_POW with a number."""
    if isinstance(exponent, Expression):
        return make_node("Pow", "ELEMENT_WISE_POW",
                         {"InputTensor": input, "ExponentTensor": exponent},
                         {"ScaleBias": scaleBias})[0]
    return make_node("Pow", "ELEMENT_WISE_CONSTANT_POW", {"InputTensor": input},
                     {"ScaleBias": scaleBias, "Exponent": float(exponent)})[0]


def ActivationSoftmax(input, axes=None):
    """ACTIVATION_SOFTMAX (the last axis), or ACTIVATION_SOFTMAX1 over ``axes``."""
    if axes is None:
        return make_node("ActivationSoftmax", "ACTIVATION_SOFTMAX", {"InputTensor": input}, {})[0]
    return make_node("ActivationSoftmax", "ACTIVATION_SOFTMAX1", {"InputTensor": input},
                     {"Axes": list(axes)})[0]


def Identity(input, scaleBias=None):
    """ELEMENT_WISE_IDENTITY (with an optional DML_SCALE_BIAS or (scale, bias))."""
    return make_node("Identity", "ELEMENT_WISE_IDENTITY", {"InputTensor": input},
                     {"ScaleBias": scaleBias})[0]


def _scale_bias(scale, bias):
    return dml.DML_SCALE_BIAS(float(scale), float(bias))


def _install_overloads():
    """``a + b``, ``x * 2.0``, ``2.0 - x``, ``1 / x``, ``-x``: DirectMLX's overloads."""
    def binary(op, scale_bias):
        def method(self, other):
            if isinstance(other, Expression):
                return generic("DML_OPERATOR_ELEMENT_WISE_" + op)(self, other)
            if isinstance(other, (int, float, np.floating, np.integer)):
                return Identity(self, _scale_bias(*scale_bias(float(other))))
            return NotImplemented
        return method

    Expression.__add__ = binary("ADD", lambda v: (1.0, v))
    Expression.__radd__ = Expression.__add__
    Expression.__sub__ = binary("SUBTRACT", lambda v: (1.0, -v))
    Expression.__mul__ = binary("MULTIPLY", lambda v: (v, 0.0))
    Expression.__rmul__ = Expression.__mul__
    Expression.__truediv__ = binary("DIVIDE", lambda v: (1.0 / v, 0.0))
    Expression.__rsub__ = lambda self, v: Identity(self, _scale_bias(-1.0, float(v)))
    Expression.__neg__ = lambda self: Identity(self, _scale_bias(-1.0, 0.0))
    Expression.__rtruediv__ = lambda self, v: Identity(
        make_node("Recip", "ELEMENT_WISE_RECIP", {"InputTensor": self}, {})[0],
        _scale_bias(float(v), 0.0))


_install_overloads()


class _Builder:
    """The fluent builders: ``ConvolutionBuilder(x, w, b).Strides([2, 2]).Build()``; each
    setter names one of the function's parameters (DirectMLX's names, capitalised)."""

    function = None
    names: tuple = ()

    def __init__(self, *args):
        self._args, self._kw = args, {}

    def __getattr__(self, name):
        key = name[:1].lower() + name[1:]
        if key not in self.names:
            raise AttributeError(f"{type(self).__name__} has no setter {name}")

        def setter(value):
            self._kw[key] = value
            return self
        return setter

    def Build(self):
        return type(self).function(*self._args, **self._kw)


class ConvolutionBuilder(_Builder):
    function = staticmethod(Convolution)
    names = ("mode", "direction", "strides", "dilations", "startPadding", "endPadding",
             "outputPadding", "groupCount", "fusedActivation", "outputSizes")


class GemmBuilder(_Builder):
    function = staticmethod(Gemm)
    names = ("c", "transA", "transB", "alpha", "beta", "fusedActivation")

    def C(self, c):
        self._kw["c"] = c
        return self


class MaxPoolingBuilder(_Builder):
    function = staticmethod(MaxPooling)
    names = ("strides", "startPadding", "endPadding", "dilations", "outputIndices",
             "outputSizes")


HAND_WRITTEN = {f.__name__: f for f in (
    Add, Convolution, Gemm, Reduce, AveragePooling, MaxPooling, Slice, Cast, Split, Join,
    Padding, Upsample2D, ValueScale2D, Resample, BatchNormalization, MeanVarianceNormalization,
    TopK, FillValueConstant, FillValueSequence, Pow, ActivationSoftmax, Identity)}


def all_functions() -> dict:
    """Every dmlx operator function by name: generated for each implemented operator, then
    DirectMLX's signatures and the hand-written ones over them."""
    implemented = [n for n, _ in dml.supported_operators()]
    return {**generated(implemented), **signature_functions(), **HAND_WRITTEN}
