"""``dmlsim.onnx.compare``: where a model's result leaves the exact answer, node by node.

Three runs of the same ONNX graph on the same feeds:

1. **DML, connected** -- the model with every node's outputs made graph outputs, through a
   ``dmlsim.onnx`` session with the execution flags asked for (DML's default computes FLOAT16
   in FLOAT32 and rounds once; ``DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION`` lets it
   accumulate in half, as some drivers do): what each value becomes with the errors of every
   node before it.
2. **float64 reference** -- the graph with every floating-point type widened to DOUBLE (inputs,
   initializers, Cast targets, constants), run by ``onnx.reference``: what the model means
   without rounding.
3. **DML, one node at a time** -- every node in one model of disconnected nodes, each fed the
   reference values of its inputs rounded to the types the model declares for them, against the
   same nodes in float64 on those same inputs: the error a node *introduces* given exact
   inputs, apart from what it inherits (and apart from its inputs' own rounding).

Errors are measured per node output against the reference: largest absolute and relative
difference, and ULPs in the output's own type at the output's scale (the difference over the
spacing of that type at the output's largest reference magnitude: a sum that cancels to near
zero is not thousands of ULPs off, its error is weighed against the values it was made of);
integer and boolean outputs count differing values, so data movement and integer arithmetic
report 0 when exact. ``Report.first_divergent(ulp=N)`` names the first node
(topological order) whose introduced error exceeds N ULP.

The float64 reference knows ONNX's operators and, from ``onnx_compare_refs``, the contrib
operators a genai language model is made of (SimplifiedLayerNormalization,
SkipSimplifiedLayerNormalization, RotaryEmbedding, GroupQueryAttention, MatMulNBits); others are
E_NOTIMPL naming them. ``flush_denormals=True`` runs 1 and 3 with denormals flushed to zero at
every node boundary (``onnx_compare_ftz``), as a driver with flush-to-zero would.
``half_matmul=True`` runs 1 and 3 with every FLOAT16 MatMul and Gemm accumulating in FLOAT16
(``onnx_compare_halfmm``), as a driver with half accumulators would.
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from .._api import public as dml
from . import onnx_model
from .onnx_compare_ftz import flushed
from .onnx_compare_halfmm import half_accumulated
from .onnx_compare_refs import OPS as REFS
from .onnx_inference import InferenceSession, SessionOptions
from .onnx_lower import fail

_FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)


class Row(NamedTuple):
    """One node output: errors against the float64 reference."""

    index: int
    name: str            # the node's name (or op type and index) and the output
    op_type: str
    dtype: str
    max_abs_error: float
    max_rel_error: float
    max_ulp: float            # accumulated: this value as the whole DML graph computes it
    error_introduced: float   # ULPs this node adds given exact inputs (nan where not measured)
    device: str               # where the connected run computed it ("DML" or "CPU")


class Report:
    """``compare``'s answer: ``rows`` in topological order, the flags the DML runs used."""

    def __init__(self, rows, flags, model_name, flush_denormals=False, half_matmul=False):
        self.rows, self.flags, self.model_name = rows, flags, model_name
        self.flush_denormals, self.half_matmul = flush_denormals, half_matmul

    @property
    def mode(self) -> str:
        """The precision mode: "default" or "half", with " + MatMul accumulating in FLOAT16"
        and " + flushed denormals"."""
        return ("half" if self.flags & 1 else "default") + \
            (" + MatMul accumulating in FLOAT16" if self.half_matmul else "") + \
            (" + flushed denormals" if self.flush_denormals else "")

    def first_divergent(self, ulp=1.0):
        """The first row whose introduced error exceeds ``ulp`` ULP, or None."""
        return next((r for r in self.rows if r.error_introduced > ulp), None)

    def worst(self, n=20):
        return sorted(self.rows, key=lambda r: -np.nan_to_num(r.max_ulp, nan=-1))[:n]

    def table(self, top=None, ulp=1.0) -> str:
        first = self.first_divergent(ulp)
        rows = self.worst(top) if top else self.rows
        half = ("ALLOW_HALF_PRECISION_COMPUTATION" if self.flags & 1 else "default precision") \
            + (", MatMul/Gemm accumulating in FLOAT16" if self.half_matmul else "") \
            + (", denormals flushed at node boundaries" if self.flush_denormals else "")
        lines = [f"{self.model_name}: DML ({half}) against a float64 reference; ULPs in each "
                 "output's type",
                 f"{'node':<4} {'output':<36} {'op':<18} {'type':<8} {'max |err|':>10} "
                 f"{'max rel':>9} {'ULP':>10} {'introduced':>10}"]
        for r in rows:
            mark = "  <- first divergent" if first is not None and r is first else ""
            lines.append(f"{r.index:<4} {r.name[:36]:<36} {r.op_type[:18]:<18} {r.dtype:<8} "
                         f"{r.max_abs_error:>10.3g} {r.max_rel_error:>9.3g} {r.max_ulp:>10.4g} "
                         f"{r.error_introduced:>10.4g}{mark}")
        lines.append(f"first node introducing more than {ulp:g} ULP: "
                     f"{first.name if first else 'none'}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def to_json(self) -> str:
        return json.dumps({"model": self.model_name, "flags": self.flags,
                           "flush_denormals": self.flush_denormals,
                           "half_matmul": self.half_matmul,
                           "rows": [r._asdict() for r in self.rows]},
                          default=lambda x: None if x != x else x)

    def plot(self, *others, ax=None):
        """Error per node (ULP, log scale) for this report and ``others`` (other precision
        modes of the same model), accumulated as lines and introduced as markers."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 4))
        for rep in (self,) + others:
            label = rep.mode
            x = [r.index for r in rep.rows]
            ax.plot(x, [max(r.max_ulp, 1e-3) for r in rep.rows], label=f"{label}: accumulated")
            ax.scatter(x, [max(np.nan_to_num(r.error_introduced), 1e-3) for r in rep.rows],
                       s=12, label=f"{label}: introduced")
        ax.set_yscale("log")
        ax.set_xlabel("node (topological order)")
        ax.set_ylabel("max error (ULP of the output type)")
        ax.legend()
        return ax


def compare(model, feeds, *, execution_flags=0, half_precision=False, half_matmul=False,
            flush_denormals=False, sess_options=None) -> Report:
    """Compare ``model`` (path, bytes or ModelProto) on ``feeds`` ({input: array}) through DML
    operators against a float64 reference, per node; ``half_precision`` adds
    DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION to ``execution_flags``;
    ``half_matmul`` (implies ``half_precision``) makes FLOAT16 MatMul and Gemm accumulate in
    FLOAT16, as a driver with half accumulators does (``onnx_compare_halfmm``);
    ``flush_denormals`` flushes FLOAT and FLOAT16 subnormals to zero at node boundaries."""
    switches = (half_precision, half_matmul, flush_denormals)
    if not all(isinstance(b, (bool, np.bool_)) for b in switches) or \
            isinstance(execution_flags, bool) or \
            not isinstance(execution_flags, (int, np.integer)) or execution_flags < 0:
        fail(dml.E_INVALIDARG, f"compare: execution_flags is {execution_flags!r}, "
                               f"half_precision {half_precision!r}, half_matmul "
                               f"{half_matmul!r} and flush_denormals {flush_denormals!r}; a "
                               "non-negative integer and three bools")
    flags = int(execution_flags) | (1 if half_precision or half_matmul else 0)
    source, what = onnx_model.load(model)
    if not isinstance(feeds, dict):
        fail(dml.E_INVALIDARG, f"compare: feeds is a {type(feeds).__name__}; a dict")
    known = {(op.op_domain, op.__name__) for op in REFS}
    for n in source.graph.node:
        if n.domain not in ("", "ai.onnx") and (n.domain, n.op_type) not in known:
            fail(dml.E_NOTIMPL, f"compare: node '{n.name}' is {n.domain}.{n.op_type}; the "
                                "float64 reference has no such operator yet (it has "
                                f"{', '.join(sorted(o.__name__ for o in REFS))})")
    source = _with_data(source, model)
    inferred = _infer(source)
    nodes = list(inferred.graph.node)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in
             list(inferred.graph.value_info) + list(inferred.graph.input) +
             list(inferred.graph.output) if vi.type.HasField("tensor_type")}
    for init in inferred.graph.initializer:
        types[init.name] = init.data_type

    def options():
        o = SessionOptions()
        if sess_options is not None:
            o._config.update(sess_options._config)
        o.execution_flags = flags
        return o
    outs = [o for n in nodes if n.op_type != "Constant" for o in n.output if o]
    dbg = _with_outputs(inferred, outs)
    ref = _reference(inferred, feeds)
    if half_matmul:
        dbg = half_accumulated(dbg, types, _shapes(inferred, ref))
    if flush_denormals:
        dbg = flushed(dbg, types)
    session = InferenceSession(dbg, options())
    got = dict(zip(session.output_names, session.run(None, feeds)))
    for name, value in list(got.items()) + [(k, np.asarray(v)) for k, v in feeds.items()]:
        if not types.get(name):  # after a contrib operator shape inference cannot type
            types[name] = helper.np_dtype_to_tensor_dtype(np.asarray(value).dtype)
    placement = {r.name: r.device for r in session.placement().rows}
    alone = _introduced(inferred, nodes, ref, types, options(), InferenceSession,
                        bool(flush_denormals), bool(half_matmul))
    rows = []
    for k, n in enumerate(nodes):
        if n.op_type == "Constant":
            continue
        for o in n.output:
            if not o or o not in got or o not in ref:
                continue
            a, u, rel = _errors(got[o], ref[o], types.get(o, 0))
            intro = _errors(*alone[o], types.get(o, 0))[1] if o in alone else float("nan")
            label = f"{n.name or n.op_type + str(k)}:{o}" if len(n.output) > 1 else \
                (n.name or f"{n.op_type}{k}")
            rows.append(Row(k, label, n.op_type, np.asarray(got[o]).dtype.name, a, rel, u,
                            intro, "CPU" if placement.get(n.name) == "CPU" else "DML"))
    return Report(rows, flags, what, bool(flush_denormals), bool(half_matmul))


def _shapes(model, values) -> dict:
    """{value: shape} of every initializer of ``model`` and every value in ``values``."""
    return {**{i.name: tuple(i.dims) for i in model.graph.initializer},
            **{k: np.shape(v) for k, v in values.items()}}


def _with_data(model, source):
    """``model`` with its external data read in (compare builds models of its own from it)."""
    if not isinstance(source, (str, os.PathLike)) or not any(
            i.data_location == TensorProto.EXTERNAL for i in model.graph.initializer):
        return model
    try:
        return onnx.load(os.fspath(source))
    except Exception as e:  # noqa: BLE001 -- a missing or short data file
        fail(dml.E_INVALIDARG, f"compare: the external data of {source} cannot be read: {e}")


def _infer(model):
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as e:  # noqa: BLE001 -- onnx says why
        fail(dml.E_INVALIDARG, f"compare: shape inference failed: {e}")


def _with_outputs(model, names):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in have)
    return m


def _widen(t: TensorProto) -> TensorProto:
    if t.data_type not in _FLOATS:
        return t
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name)


def _reference(model, feeds) -> dict:
    """Every value of ``model`` computed in float64 by onnx.reference."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if vi.type.tensor_type.elem_type in _FLOATS:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    inits = [_widen(t) for t in m.graph.initializer]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    for k, n in enumerate(m.graph.node):
        for j, o in enumerate(n.output):  # onnx.reference would store an unnamed output under
            if not o:                     # '', which an absent input ('') then reads
                n.output[j] = f"__unnamed{k}_{j}"
        for a in n.attribute:
            if a.name in ("to", "dtype") and a.type == onnx.AttributeProto.INT and a.i in _FLOATS:
                a.i = TensorProto.DOUBLE
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(_widen(a.t))
    wide = {k: (np.asarray(v).astype(np.float64) if np.asarray(v).dtype.kind == "f" else
                np.asarray(v)) for k, v in feeds.items()}
    try:
        values = ReferenceEvaluator(m, new_ops=REFS).run(None, wide, intermediate=True)
    except Exception as e:  # noqa: BLE001 -- the reference evaluator says why
        fail(dml.E_NOTIMPL, f"compare: the float64 reference (onnx.reference) cannot run the "
                            f"model: {type(e).__name__}: {e}")
    return {k: np.asarray(v) for k, v in values.items()}


def _introduced(model, nodes, ref, types, options, session_type, flush=False,
                half_matmul=False) -> dict:
    """Each node run alone on DML from its inputs' reference values rounded to their types
    (``flush``: with denormals flushed at its boundaries, ``onnx_compare_ftz``;
    ``half_matmul``: MatMul and Gemm accumulating in FLOAT16, ``onnx_compare_halfmm``)."""
    inits = {i.name: i for i in model.graph.initializer}
    alone_types = {i.name: i.data_type for i in model.graph.initializer}
    new_nodes, inputs, feeds, outputs, rename = [], [], {}, [], {}
    for k, n in enumerate(nodes):
        if n.op_type == "Constant" or any(a.HasField("g") or a.graphs for a in n.attribute):
            continue
        if any(i and i not in ref and i not in inits for i in n.input):
            continue
        ins = []
        for j, name in enumerate(n.input):
            if not name or name in inits:
                ins.append(name)
                continue
            fresh = f"__in{k}_{j}"
            dtype = helper.tensor_dtype_to_np_dtype(types.get(name) or TensorProto.DOUBLE)
            value = np.asarray(ref[name]).astype(dtype)
            feeds[fresh] = value
            alone_types[fresh] = helper.np_dtype_to_tensor_dtype(value.dtype)
            inputs.append(helper.make_tensor_value_info(
                fresh, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
            ins.append(fresh)
        outs = []
        for o in n.output:
            if o and o in types:
                rename[f"__out{k}_{o}"] = o
                alone_types[f"__out{k}_{o}"] = types[o]
                outs.append(f"__out{k}_{o}")
                outputs.append(onnx.ValueInfoProto(name=outs[-1]))
            else:
                outs.append("")
        copy = helper.make_node(n.op_type, ins, outs, name=f"{n.name}__alone{k}", domain=n.domain)
        copy.attribute.extend(n.attribute)
        new_nodes.append(copy)
    if not new_nodes:
        return {}
    g = helper.make_graph(new_nodes, "alone", inputs, outputs,
                          [i for i in model.graph.initializer])
    m = helper.make_model(g, opset_imports=model.opset_import)
    m.ir_version = model.ir_version
    run = half_accumulated(m, alone_types, _shapes(m, feeds)) if half_matmul else m
    s = session_type(flushed(run, alone_types) if flush else run, options)
    got = {rename[n]: v for n, v in zip(s.output_names, s.run(None, feeds))}
    exact = _reference(m, feeds)  # each node in float64 on the same rounded inputs
    return {o: (v, exact[k]) for k, o in rename.items() if k in exact
            for v in [got[o]]}


def _errors(got, want, elem_type):
    """(max |diff|, max ULP in the value's type, max relative difference)."""
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return float("inf"), float("inf"), float("inf")
    if g.size == 0:
        return 0.0, 0.0, 0.0
    if g.dtype.kind not in "fc" or elem_type not in _FLOATS + (TensorProto.DOUBLE,):
        diff = np.asarray(g.astype(np.float64) != w.astype(np.float64), np.float64) \
            if g.dtype.kind == "b" else np.abs(g.astype(np.float64) - w.astype(np.float64))
        m = float(diff.max())
        return m, m, m
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    both_nan = np.isnan(g64) & np.isnan(w64)
    same_inf = np.isinf(g64) & (g64 == w64)
    diff = np.where(both_nan | same_inf, 0.0, np.abs(g64 - w64))
    finite = np.abs(w64[np.isfinite(w64)])
    scale = float(finite.max()) if finite.size else 0.0
    spacing = float(np.spacing(np.asarray(scale, g.dtype)))  # at the output's largest value
    with np.errstate(invalid="ignore", divide="ignore"):
        ulp = np.where(diff == 0, 0.0, diff / spacing)
        rel = np.where(diff == 0, 0.0, diff / np.maximum(np.abs(w64), np.finfo(g.dtype).tiny))
    return float(np.nan_to_num(diff, nan=np.inf).max()), \
        float(np.nan_to_num(ulp, nan=np.inf).max()), float(np.nan_to_num(rel, nan=np.inf).max())
