"""What ONNX Runtime's DirectML execution provider registers: its kernel table, in dmlsim's words.

Transcribed from the provider's registration table (microsoft/onnxruntime,
``onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/OperatorRegistration.cpp``,
the ORT 1.20-era table with GroupQueryAttention, MatMulNBits and the opset-21 rows, built with
``DML_TARGET_VERSION >= 0x6400``). Each row there names the *operator set* of the registration
(``REG_INFO(13, Add, ...)``) and ORT takes the operator's since-version in that set; ORT's kernel
lookup then matches a node only when the node's own since-version (the operator's schema version
in the model's opset) is exactly one of those. So an opset-23 ``Cast`` (since-version 23) finds no
DML kernel although ``Cast`` is registered at 6, 9, 13, 19 and 21, and ORT runs it on the CPU.

``verdict(node, opset, elem_type_of)`` answers (takes, reason) for one node: whether the DML EP
has a kernel for its domain, operator, since-version and tensor types. What the table cannot say
is left to dmlsim's own lowering rules, which refuse what DML cannot compute (the EP's support
queries: MaxPool, Slice, Resize, Scatter, Einsum, the recurrent ops, BatchNormalization, Pad,
LayerNormalization, SkipLayerNormalization, QLinearSigmoid, QAttention, Attention, MatMulNBits).
Operators the EP registers but never puts in a fused DML graph (RNN, GRU, LSTM, Shape, Size,
NonZero, ConcatFromSequence) are ``GRAPH_NOT_SUPPORTED``: ORT runs them on the DML EP as kernels of
their own; dmlsim lowers them into its graph all the same.
"""
from __future__ import annotations

import functools
import types

from onnx import TensorProto as T, defs

from .onnx_model import type_string

_F16_32 = {T.FLOAT16, T.FLOAT}
_INTS_8_32 = {T.UINT8, T.INT8, T.UINT16, T.INT16, T.UINT32, T.INT32}
_INTS_8_64 = _INTS_8_32 | {T.UINT64, T.INT64}
_ALL = _INTS_8_64 | {T.FLOAT16, T.FLOAT, T.DOUBLE, T.BOOL}
_SETS = {
    "f": _F16_32, "f32": {T.FLOAT}, "all": _ALL, "any": None, "bool": {T.BOOL},
    "num": _INTS_8_32 | _F16_32, "fi864": _F16_32 | _INTS_8_64,
    "fi3264": _F16_32 | {T.UINT32, T.INT32, T.UINT64, T.INT64},
    "fsi832": _F16_32 | {T.INT8, T.INT16, T.INT32},
    "signed": _F16_32 | {T.INT8, T.INT16, T.INT32, T.INT64},
    "i8": {T.UINT8, T.INT8}, "ints": _INTS_8_64, "u864": {T.UINT8, T.UINT16, T.UINT32, T.UINT64},
    "idx": {T.INT32, T.INT64}, "i64": {T.INT64}, "i32": {T.INT32}, "u8": {T.UINT8},
    "i32f": _F16_32 | {T.INT32}, "f32i32": {T.FLOAT, T.INT32}, "i8i32": {T.UINT8, T.INT8, T.INT32},
    "i4i8": {T.UINT4, T.INT4, T.UINT8, T.INT8}, "fi8": _F16_32 | {T.UINT8, T.INT8},
    "topk": _INTS_8_32 | _F16_32 | {T.UINT64, T.INT64},
    "range": {T.INT16, T.INT32, T.INT64, T.FLOAT}, "nonzero": _F16_32 | _INTS_8_32 | {T.BOOL},
    "i8f32": {T.UINT8, T.INT8, T.FLOAT},
}

# operator [domain] : registration opsets : type constraints (label=set) [: flags]
# flags: G = GRAPH_NOT_SUPPORTED (an EP kernel outside the fused graph).
_TABLE = """
Conv 7,11 T=f
NhwcConv@ms 1 T=f
ConvTranspose 7,11 T=f
ConvTransposeWithDynamicPads@ms 1 T=f
AveragePool 7,10,11,19 T=f
GlobalAveragePool 7 T=f
MaxPool 7 T=f
MaxPool 8,10,11,12 T=fi8,I=i64
GlobalMaxPool 7 T=f
LpPool 7,11,18 T=f
GlobalLpPool 7 T=f
MaxRoiPool 7 T=f
RoiAlign 10,16 T1=f,T2=idx
InstanceNormalization 7 T=f
BatchNormalization 7,9,14,15 T=f
LayerNormalization 7 T=f,U=f,V=f
LayerNormalization 17 T=f,U=f32
SimplifiedLayerNormalization 7 T=f,U=f,V=f
LRN 7,13 T=f
MeanVarianceNormalization 7,9,13 T=f
LpNormalization 7 T=f
RNN 7,14 T=f G
GRU 7,14 T=f G
LSTM 7,14 T=f G
Split 7,11,13,18 T=all
Transpose 7,13,21 T=all
Concat 7,11,13 T=all
ConcatFromSequence 11 T=any G
Slice 7 T=all
Slice 10,11,13 T=all,Tind=idx
Pad 7,11,13,18,19,21 T=all
SpaceToDepth 7,13 T=all
DepthToSpace 7,11,13 T=all
Tile 7,13 T=all
Expand 8,13 T=all
ConstantOfShape 9,21 T1=i64,T2=all
Gather 7,11,13 T=all,Tind=idx
GatherElements 11,13 T=all,Tind=idx
GatherND 11,12,13 T=all
Scatter 9,11,13 T=all,Tind=idx
ScatterElements 11,13,16 T=all,Tind=idx
ScatterND 11,13,16 T=all
EyeLike 9 T1=all,T2=all
Trilu 14 T=all
Col2Im 18 T=all
Identity 7,13 T=all
Identity 14,16,19,21 V=all
Flatten 7,9,11,13,21 T=all
Squeeze 7,11,13,21 T=all
Unsqueeze 7,11,13,21 T=all
Reshape 7,13,14,19,21 T=all
Sqrt 7,13 T=f
Reciprocal 7,13 T=f
Pow 7 T=f
Pow 12,13,15 T=i32f,T1=num
Exp 7,13 T=f
Log 7,13 T=f
Abs 7,13 T=signed
Ceil 7,13 T=f
Floor 7,13 T=f
Clip 7,11 T=f
Clip 12,13 T=fi864
Add 7,13,14 T=fi864
Sub 7,13,14 T=fi864
Mul 7,13,14 T=fi864
Div 7,13,14 T=fi864
Sum 7,8,13 T=f
Mean 7,8,13 T=f
Max 7,8 T=f
Max 12,13 T=fi864
Min 7,8 T=f
Min 12,13 T=fi864
Cos 7 T=f
Sin 7 T=f
Tan 7 T=f
Acos 7 T=f
Asin 7 T=f
Atan 7 T=f
Affine 7 T=f
QuantizeLinear 10,13 T1=f32i32,T2=i8
QuantizeLinear 19 T1=i32f,T2=i8
QuantizeLinear 21 T1=f,T2=i4i8
DequantizeLinear 10,13 T=i8i32
DequantizeLinear 19 T1=i8i32,T2=f
DequantizeLinear 21 T1=i4i8,T2=f
QuantizeLinear@ms 1 T1=i32f,T2=i8
DequantizeLinear@ms 1 T1=i8i32,T2=f
Sign 9,13 T=fi864
IsNaN 9,13,20 T1=f,T2=bool
Sinh 9 T=f
Cosh 9 T=f
Asinh 9 T=f
Acosh 9 T=f
Atanh 9 T=f
Erf 9,13 T=f
Where 9,16 B=bool,T=all
ReduceSum 7,11,13 T=fi3264
Einsum 12 T=f
ReduceMean 7,11,13 T=f
ReduceMean 18 T=fi3264
ReduceProd 7,11,13,18 T=fi3264
ReduceLogSum 7,11,13 T=f
ReduceLogSum 18 T=fi3264
ReduceLogSumExp 7,11,13 T=f
ReduceLogSumExp 18 T=fi3264
ReduceSumSquare 7,11,13,18 T=fi3264
ReduceL1 7,11,13,18 T=fi3264
ReduceL2 7,11,13 T=f
ReduceL2 18 T=fi3264
ReduceMax 7,11 T=f
ReduceMax 12,13 T=fi864
ReduceMax 18 T=fi3264
ReduceMax 20 T=all
ReduceMin 7,11 T=f
ReduceMin 12,13 T=fi864
ReduceMin 18 T=fi3264
ReduceMin 20 T=all
ArgMax 7,11,12,13 T=fi864
ArgMin 7,11,12,13 T=fi864
Gemm 7,9,11,13 T=f
Neg 7,13 T=signed
Greater 7 T=f,T1=bool
Greater 9,13 T=fi864,T1=bool
Less 7 T=f,T1=bool
Less 9,13 T=fi864,T1=bool
GreaterOrEqual 12,16 T=fi864,T1=bool
LessOrEqual 12,16 T=fi864,T1=bool
Equal 7 T=f,T1=bool
Equal 11,13,19 T=fi864,T1=bool
Not 7 T=bool
And 7 T=bool
Or 7 T=bool
Xor 7 T=bool
BitwiseAnd 18 T=ints
BitwiseOr 18 T=ints
BitwiseXor 18 T=ints
BitwiseNot 18 T=ints
Crop 7 T=f
ImageScaler 7 T=f
Upsample 7,9,10 T=f
Resize 10 T=f
Resize 11,13,18,19 T1=fi8,T2=f
Sigmoid 7,13 T=f
HardSigmoid 7 T=f
Tanh 7,13 T=f
ScaledTanh 7 T=f
Relu 7,13 T=f
Relu 14 T=fsi832
LeakyRelu 7,16 T=f
PRelu 7 T=f
PRelu 9,16 T=fsi832
ThresholdedRelu 7,10 T=f
Elu 7 T=f
Celu 12 T=f
Selu 7 T=f
Softmax 7,11,13 T=f
LogSoftmax 7,11,13 T=f
Hardmax 7,11,13 T=f
Softsign 7 T=f
Softplus 7 T=f
ParametricSoftplus 7 T=f
Dropout 7 T=f
Shrink 9 T=num
MatMul 7,9,13 T=f
Cast 7,9,13,19,21 T1=all,T2=all
CastLike 15,19,21 T1=all,T2=all
TopK 7,10,11 T=topk,I=i64
OneHot 9,11 T1=fi3264,T2=all,T3=all
Shape 7,13,15,19,21 T=any,T1=i64 G
Size 7,13,19,21 T=any,T1=i64 G
NonZero 9,13 T=nonzero G
IsInf 10,20 T1=f32,T2=bool
Mod 10,13 T=num
BitShift 11 T=u864
Round 11 T=f
ReverseSequence 10 T=all
CumSum 11,14 T=fi3264
Range 11 T=range
MaxUnpool 9,11 T1=f,T2=i64
QLinearConv 10 T1=i8,T2=i8,T3=i8,T4=i32
QLinearMatMul 10,21 T1=i8,T2=i8,T3=i8
MatMulInteger 10 T1=i8,T2=i8,T3=i32
ConvInteger 10 T1=i8,T2=i8,T3=i32
DynamicQuantizeLinear 11 T1=f32,T2=i8
Gelu@ms 1 T=f
BiasGelu@ms 1 T=f
FastGelu@ms 1 T=f
QuickGelu@ms 1 T=f
BiasSplitGelu@ms 1 T=f
BiasAdd@ms 1 T=f
FusedMatMul@ms 1 T=f
FusedMatMulActivation@ms 1 T=f
DynamicQuantizeMatMul@ms 1 T1=f32,T2=i8
MatMulIntegerToFloat@ms 1 T1=i8,T2=i8,T3=f
QLinearSigmoid@ms 1 T=i8
QLinearAdd@ms 1 T=i8
QLinearConcat@ms 1 TF=f32,T8=i8,TV=i8f32
QLinearAveragePool@ms 1 T=i8
QLinearGlobalAveragePool@ms 1 T=i8
QAttention@ms 1 T1=i8,T2=i8,T3=f,T4=i32
Attention@ms 1 T=f,M=i32
MultiHeadAttention@ms 1 T=f,M=i32
GroupQueryAttention@ms 1 T=f,M=i32
RotaryEmbedding@ms 1 T=f,M=i64
SkipLayerNormalization@ms 1 T=f
SkipSimplifiedLayerNormalization@ms 1 T=f
EmbedLayerNormalization@ms 1 T=f
GroupNorm@ms 1 T=f,M=f
MatMulNBits@ms 1 T1=f,T2=u8
"""

MS = "com.microsoft"
# Registered beside the table (DmlDFT.h, DmlSTFT.h, DmlGridSample.h): ORT's DML EP runs these
# with compute shaders of its own, not DML operators, so dmlsim has nothing to lower them onto.
SHADER_OPS = ("DFT", "STFT", "GridSample")


class Row(types.SimpleNamespace):
    """One registration: ``opset`` as the table writes it, ``types`` {label: set or None},
    ``graph`` False for kernels outside the fused DML graph."""


def _parse(text) -> dict:
    rows: dict = {}
    for line in text.strip().splitlines():
        parts = line.split()
        name, domain = (parts[0].split("@") + [""])[:2]
        domain = MS if domain == "ms" else ""
        labels = dict(kv.split("=") for kv in parts[2].split(","))
        for opset in parts[1].split(","):
            rows.setdefault((domain, name), []).append(Row(
                opset=int(opset), types={k: _SETS[v] for k, v in labels.items()},
                graph="G" not in parts[3:]))
    return types.MappingProxyType({k: tuple(v) for k, v in rows.items()})


TABLE = _parse(_TABLE)


@functools.lru_cache(maxsize=4096)  # pure: (operator, domain, opset) -> since-version
def _since(name, domain, opset) -> int | None:
    """The since-version of ``name`` in operator set ``opset`` (ONNX's schemas); 1 for the
    operators ORT defines in the ONNX domain itself and for com.microsoft ones."""
    if domain == MS:
        return 1
    try:
        return defs.get_schema(name, opset, "").since_version
    except Exception:  # noqa: BLE001 -- ORT's own ONNX-domain contrib ops (v1)
        return 1


def registered(name, domain="") -> tuple:
    """The since-versions the DML EP has a kernel for (empty if none)."""
    rows = TABLE.get((_domain(domain), name), ())
    return tuple(sorted({_since(name, _domain(domain), r.opset) for r in rows}))


def _domain(domain) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def verdict(node, opset: int, elem_type_of) -> tuple[bool, str, bool]:
    """(takes, reason, in_graph) for ``node`` in a model importing ``opset`` for its domain;
    ``elem_type_of(name)`` gives a value's TensorProto element type (0 if unknown)."""
    domain = _domain(node.domain)
    label = node.op_type if not domain else f"{domain}.{node.op_type}"
    rows = TABLE.get((domain, node.op_type))
    if domain == "com.dmlsim":  # dmlsim's own pieces of NonZero, as the EP's kernel runs it
        return True, "", False
    if not domain and node.op_type in SHADER_OPS:
        return True, (f"ORT's DML EP runs {label} with a compute shader of its own, not a DML "
                      "operator"), False
    if not rows:
        return False, f"ORT's DML EP registers no kernel for {label}", False
    since = _since(node.op_type, domain, opset)
    match = [r for r in rows if _since(node.op_type, domain, r.opset) == since]
    if not match:
        have = ", ".join(str(v) for v in registered(node.op_type, domain))
        return False, (f"ORT's DML EP registers {label} at since-versions {have}; this node is "
                       f"{label}-{since} (opset {opset})"), False
    row = match[-1]
    bad = _type_mismatch(node, since, domain, row, elem_type_of)
    if bad:
        return False, f"ORT's DML EP does not take {label} with {bad}", row.graph
    return True, "", row.graph


def _type_mismatch(node, since, domain, row, elem_type_of) -> str:
    if domain:
        return ""  # com.microsoft schemas are ORT's; their type labels are checked by dmlsim
    try:
        schema = defs.get_schema(node.op_type, since, "")
    except Exception:  # noqa: BLE001 -- ORT's own ONNX-domain contrib schema
        return ""
    for kind, names in (("inputs", node.input), ("outputs", node.output)):
        params = schema.inputs if kind == "inputs" else schema.outputs
        for k, name in enumerate(names):
            if not name:
                continue
            p = params[min(k, len(params) - 1)] if params else None
            if p is None:
                continue
            allowed = row.types.get(p.type_str, "unlisted")
            if allowed == "unlisted" or allowed is None:
                continue
            t = elem_type_of(name)
            if t and t not in allowed:
                return f"{p.type_str} = {type_string(t)} ({kind[:-1]} '{name}')"
    return ""
