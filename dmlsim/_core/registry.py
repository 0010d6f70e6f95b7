"""The operator registry: one :class:`OperatorDef` per implemented DML_OPERATOR_TYPE.

An operator module in ``dmlsim/ops`` declares its operator once and reads like the reference
page: a JAX kernel whose parameters are the desc's field names, a float64 NumPy reference
written apart from it, a shape rule, validation rules and worked examples::

    def gemm(ATensor, BTensor, CTensor, *, TransA, TransB, Alpha, Beta, ctx): ...

    register(OperatorDef("DML_OPERATOR_GEMM", gemm, gemm_reference, output_sizes=gemm_sizes,
                         rules=(...), examples=(...)))

The registry does the shared work: it checks the kernel's and the reference's parameters
against the generated schema when the module is imported (positional parameters are the
input tensor fields in struct order, keyword-only ones attribute fields or ``ctx``), calls
them with typed arrays (a list for a tensor array, None for an absent optional tensor),
applies the FusedActivation wherever the schema has one, and compares the shape rule with the
desc's output tensors at CreateOperator. Several outputs are returned as a tuple in schema
order. Modules are discovered, not listed (:func:`load_all`).
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
import threading
from dataclasses import dataclass, field
from typing import Callable

import jax
import numpy as np

from .._schema.enums_generated import DML_EXECUTION_FLAGS
from .._schema.operators_generated import OPERATORS
from . import dtypes
from .hresult import E_INVALIDARG, fail
from .tensor import OpSpec, TensorSpec

_REGISTRY: dict[str, "OperatorDef"] = {}
_LOCK = threading.Lock()
_LOADED = False
HALF = int(DML_EXECUTION_FLAGS.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION)
FUSED = "FusedActivation"


@dataclass(frozen=True)
class Example:
    """A worked case, which is both a test and documentation.

    ``inputs``/``outputs``: arrays by field name (dtype and shape give DataType and Sizes; a
    list for a tensor array). An output given as None is not compared and its desc comes
    from the shape rule; an expected array whose shape differs from what the shape rule gives
    is reshaped to it (so long outputs can be written flat). ``attrs``: desc fields (C names;
    ScaleBias as (scale, bias), scalar unions as NumPy scalars). ``owned``: input fields
    flagged DML_TENSOR_FLAG_OWNED_BY_DML (bound at initialization). ``strides``: element
    strides by field, for strided views of the same values."""

    inputs: dict
    outputs: dict
    attrs: dict = field(default_factory=dict)
    note: str = ""
    owned: tuple = ()
    strides: dict = field(default_factory=dict)


class Check:
    """What a validation or shape rule receives besides the spec: the operator's name and the
    device's feature level, and :meth:`fail`, which raises E_INVALIDARG with a message that
    starts with the operator's name."""

    def __init__(self, name: str, level: int):
        self.name, self.level = name, level

    def fail(self, message: str):
        fail(E_INVALIDARG, f"{self.name}: {message}")

    def require(self, condition, message: str) -> None:
        if not condition:
            self.fail(message)


class Sizes(tuple):
    """Output sizes from a shape rule, with what they come from ('ATensor and BTensor')."""

    source: str

    def __new__(cls, sizes, source: str = "the inputs"):
        obj = super().__new__(cls, (int(s) for s in sizes))
        obj.source = source
        return obj


@dataclass(frozen=True)
class KernelContext:
    """What a kernel may know besides its inputs and attributes: the execution flags it was
    compiled with, the device's feature level and the output tensors' specs (by field)."""

    flags: int = 0
    level: int = 0x6400
    outputs: dict = field(default_factory=dict)

    @property
    def half(self) -> bool:
        return bool(self.flags & HALF)

    def compute_type(self, dtype) -> np.dtype:
        """FLOAT16 computes in float32 and rounds once, unless half precision is allowed."""
        dtype = np.dtype(dtype)
        return np.dtype(np.float32) if dtype == np.float16 and not self.half else dtype

    def upcast(self, x):
        return x.astype(self.compute_type(x.dtype))

    def product_operand(self, x):
        """``x`` as an operand of a matrix product or convolution accumulating in the compute
        type: FLOAT16 stays FLOAT16 (a product of two of them is exact in float32, so a
        float32-accumulating product on FLOAT16 operands, which GPUs run on tensor cores,
        is the same arithmetic as one on their float32 copies); other types are upcast."""
        return x if np.dtype(x.dtype) == np.float16 else self.upcast(x)

    def out_dtype(self, name: str = "OutputTensor") -> np.dtype:
        return self.outputs[name].np_dtype

    @classmethod
    def of(cls, spec: OpSpec, flags: int = 0, level: int = 0x6400) -> "KernelContext":
        """The context of ``spec``'s kernel: its output tensors by field."""
        return cls(flags, level, {n: v for n, v in spec.tensors if n in spec.outputs})


def compute_type(dtype, ctx: KernelContext):
    return ctx.compute_type(dtype)


def loop(control: Callable, *args, **kwargs):
    """``control(*args, **kwargs)`` (``lax.scan``, ``lax.fori_loop``) with jit on: kernels are
    traced with it off (:meth:`OperatorDef.run`), under which JAX would unroll the loop into
    one copy of its body per iteration."""
    with jax.disable_jit(False):
        return control(*args, **kwargs)


def _jit_off_when_traced(inputs: dict):
    for value in inputs.values():
        for v in value if isinstance(value, list) else (value,):
            if isinstance(v, jax.core.Tracer):
                return jax.disable_jit()
    return contextlib.nullcontext()


@dataclass(frozen=True)
class OperatorDef:
    """One operator. Hooks (all optional):

    - ``output_sizes(spec, check) -> {output field: sizes}`` (a list of sizes for a tensor
      array; :class:`Sizes` to say where they come from): CreateOperator compares it with the
      desc, and descs built by dmlsim (``dmlsim.infer_outputs``, examples, dmlx) use it.
    - ``output_types(spec) -> {output field: DML_TENSOR_DATA_TYPE}`` for inferred descs
      (default: the first input tensor's type).
    - ``rules``: ``rule(spec, check)`` raising through ``check.fail``.
    - ``persistent_layout(spec, field, tensor) -> TensorSpec``: how an OWNED_BY_DML input is
      stored in the persistent resource (same sizes and type; e.g. transposed strides, as a
      driver keeps a pre-transposed filter); the default keeps its bytes as bound.
    - ``persistent_bytes(spec, stored) -> int`` (default: the stored tensors, each rounded up
      to 256) and ``temporary_bytes(spec) -> int`` (default 0).
    - ``cpu_compiler_options(spec) -> dict | None``: XLA options for a CPU program that runs
      the operator (merged over its dispatches; a large CONVOLUTION asks for XLA's own
      multithreaded convolutions).
    - ``cpu_stored_inputs(spec) -> dict``: {input field: dimension order or None}, the inputs
      that a CPU program stores once before the kernel reads them, when another node of a
      compiled graph produced them (a CONVOLUTION pads, transposes or hands its input to a
      library, and XLA's CPU backend otherwise runs the producer's whole element-wise chain
      inside that loop: a padding loop element by element); a dimension order stores the
      value transposed to it (the layout the kernel's library reads: channels last for a
      convolution XLA runs), and the kernel still gets it in the desc's order.
    - ``condition(spec, condition)``: picks support tables that carry a condition (REDUCE).
    - ``ulp``: tolerated ULP against the reference, per float data type name.
    - ``error_bound(inputs, spec, np_dtype) -> array``: instead of ULP, the largest absolute
      error each output element may have against the float64 reference (reductions such as
      GEMM, whose error scales with the sum of the magnitudes); NumPy inputs by field. The
      first output's, or a dict {output field: bound} (the recurrent operators).
    """

    name: str
    kernel: Callable
    reference: Callable
    output_sizes: Callable | None = None
    rules: tuple = ()
    examples: tuple = ()
    output_types: Callable | None = None
    condition: Callable | None = None
    ulp: dict = field(default_factory=dict)
    error_bound: Callable | None = None
    persistent_layout: Callable | None = None
    persistent_bytes: Callable | None = None
    temporary_bytes: Callable | None = None
    cpu_compiler_options: Callable | None = None
    cpu_stored_inputs: Callable | None = None
    module: str = ""
    # Filled in by register():
    inputs: tuple = ()
    outputs: tuple = ()
    kernel_attrs: tuple = ()
    reference_attrs: tuple = ()
    fused: bool = False

    # ---- calling the kernel and the reference -------------------------------------------------
    def _call(self, fn, attrs, inputs, spec, ctx):
        args = [inputs.get(f) for f in self.inputs]
        kw = {a: (ctx if a == "ctx" else spec.attr.get(a)) for a in attrs}
        result = fn(*args, **kw)
        if len(self.outputs) == 1:
            outs = [result]
        elif isinstance(result, (tuple, list)):
            outs = list(result)
        else:
            outs = [result]
        if len(outs) != len(self.outputs):
            raise RuntimeError(f"{self.name}: {fn.__name__} returned {len(outs)} outputs; the "
                               f"schema has {len(self.outputs)} ({', '.join(self.outputs)})")
        return outs

    def run(self, inputs: dict, spec: OpSpec, ctx: KernelContext) -> list:
        """The kernel on typed JAX arrays (by field); outputs in schema order, each still in
        the compute type, the FusedActivation applied to the first.

        Traced (inside a program's jit) with ``jax.disable_jit``: jax.numpy's functions are
        jitted functions of their own, and each call inside a trace otherwise traces and
        lowers a nested program per new signature; the program's operations are the same
        (XLA inlines those calls), so are its results. A kernel's loops run through
        :func:`loop`, which turns jit back on for them."""
        with _jit_off_when_traced(inputs):
            outs = self._call(self.kernel, self.kernel_attrs, inputs, spec, ctx)
            if self.fused:
                outs[0] = apply_fused(outs[0], spec.attr.get(FUSED), ctx, self.outputs[0])
        return outs

    def run_reference(self, inputs: dict, spec: OpSpec, ctx: KernelContext) -> list:
        """The float64 reference on NumPy arrays (by field, in their own types)."""
        with np.errstate(all="ignore"):  # NaN and inf inputs are part of every contract
            outs = self._call(self.reference, self.reference_attrs, inputs, spec, ctx)
            if self.fused and outs[0] is not None:
                outs[0] = apply_fused_reference(outs[0], spec.attr.get(FUSED), ctx,
                                                self.outputs[0])
        return outs

    # ---- shapes --------------------------------------------------------------------------------
    def expected_sizes(self, spec: OpSpec, check: Check) -> dict:
        if self.output_sizes is None:
            return {}
        return self.output_sizes(spec, check)

    def inferred_types(self, spec: OpSpec) -> dict:
        if self.output_types is not None:
            return self.output_types(spec)
        first = next((t for _, _, t in spec.slots("input") if t is not None), None)
        return {o: first.data_type for o in self.outputs} if first is not None else {}

    def stored(self, spec: OpSpec, field_name: str, tensor: TensorSpec) -> TensorSpec:
        if self.persistent_layout is None:
            return tensor
        return self.persistent_layout(spec, field_name, tensor)


def apply_fused(y, sub, ctx: KernelContext, output: str = "OutputTensor"):
    """The fused activation ``sub`` (a nested OpSpec, or None) applied to ``y``, a result
    still in the compute type; it stays there (the runtime rounds once when storing).
    DirectML applies it before the result is written (docs/guide/dml-fused-activations.md)."""
    if sub is None:
        return y
    sub_ctx = KernelContext(ctx.flags, ctx.level, {"OutputTensor": ctx.outputs.get(output)})
    return get(sub.name).run({"InputTensor": y}, sub, sub_ctx)[0]


def apply_fused_reference(y, sub, ctx: KernelContext, output: str = "OutputTensor"):
    """The float64 reference of the fused activation on the reference result ``y``."""
    y = np.asarray(y, np.float64)
    if sub is None:
        return y
    sub_ctx = KernelContext(0, ctx.level, {"OutputTensor": ctx.outputs.get(output)})
    return np.asarray(get(sub.name).run_reference({"InputTensor": y}, sub, sub_ctx)[0],
                      np.float64)


def _fmt(sizes) -> str:
    return "[" + ",".join(str(int(s)) for s in sizes) + "]"


def _gives(source: str) -> str:
    """'ATensor and BTensor give', 'InputTensor gives', 'the inputs give'."""
    plural = " and " in source or source.startswith("the ")
    return f"{source} {'give' if plural else 'gives'}"


def check_output_sizes(opdef: OperatorDef, spec: OpSpec, check: Check) -> None:
    """CreateOperator's comparison of the shape rule with the desc's output tensors."""
    expected = opdef.expected_sizes(spec, check)
    for name, want in expected.items():
        given = spec.tensor.get(name)
        source = getattr(want, "source", "the inputs")
        if given is None:
            continue
        if isinstance(given, tuple):  # a tensor array: one sizes per element
            if len(given) != len(want):
                check.fail(f"{name} has {len(given)} tensors but {_gives(source)} {len(want)}")
            for i, (g, w) in enumerate(zip(given, want)):
                if tuple(g.sizes) != tuple(w):
                    check.fail(f"{name}[{i}].Sizes is {_fmt(g.sizes)} but "
                               f"{_gives(getattr(w, 'source', source))} {_fmt(w)}")
        elif tuple(given.sizes) != tuple(want):
            check.fail(f"{name}.Sizes is {_fmt(given.sizes)} but {_gives(source)} "
                       f"{_fmt(want)}")


def infer(spec: OpSpec, level: int) -> dict:
    """{output field: (DML_TENSOR_DATA_TYPE, sizes)} for the outputs of ``spec`` (an OpSpec
    whose output tensors may be absent): its rules, shape rule and output types. A tensor
    array output gives a list of such pairs."""
    opdef = get(spec.name)
    check = Check(spec.name, level)
    for rule in opdef.rules:
        rule(spec, check)
    sizes = opdef.expected_sizes(spec, check)
    types = opdef.inferred_types(spec)
    out = {}
    for name in opdef.outputs:
        if name not in sizes:
            continue
        dt = types.get(name)
        want = sizes[name]
        if want and isinstance(want[0], (tuple, list)):
            dts = dt if isinstance(dt, (list, tuple)) else [dt] * len(want)
            out[name] = [(d, tuple(w)) for d, w in zip(dts, want)]
        else:
            out[name] = (dt, tuple(want))
    return out


# ---- registration -----------------------------------------------------------------------------

def _params(fn, opdef: OperatorDef, schema: dict, what: str) -> tuple:
    """Check ``fn``'s parameters against the schema; returns its keyword-only names."""
    where = f"{opdef.module or fn.__module__}: {what} {getattr(fn, '__name__', fn)!r} of " \
        f"{opdef.name}"
    sig = inspect.signature(fn)
    positional = [p.name for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = [p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        raise TypeError(f"{where}: *args/**kwargs are not allowed; name the desc's fields")
    fields = {f["name"] for f in schema["fields"]}
    for p in positional:
        if p not in schema["inputs"]:
            raise TypeError(f"{where}: parameter {p!r} is not an input tensor field "
                            f"(inputs: {', '.join(schema['inputs']) or 'none'})")
    if positional != list(schema["inputs"]):
        raise TypeError(f"{where}: positional parameters {positional} must be the input "
                        f"tensor fields in struct order {list(schema['inputs'])}")
    attrs = {f["name"] for f in schema["fields"] if f["kind"] == "attribute"}
    for k in keyword:
        if k == "ctx":
            continue
        if k not in fields:
            raise TypeError(f"{where}: parameter {k!r} is not a field of "
                            f"{schema['desc_struct']}")
        if k not in attrs:
            raise TypeError(f"{where}: parameter {k!r} is a tensor field; tensors are "
                            "positional")
        if k == FUSED:
            raise TypeError(f"{where}: {FUSED} is applied by the registry; drop the parameter")
    return tuple(keyword)


def declare(opdef: OperatorDef) -> OperatorDef:
    """``opdef`` checked against the schema, with its derived fields filled in; raises
    TypeError naming the module and the field for a parameter that is not a desc field."""
    schema = OPERATORS.get(opdef.name)
    if schema is None:
        raise RuntimeError(f"{opdef.module}: {opdef.name} is not a DML_OPERATOR_TYPE")
    module = opdef.module or getattr(opdef.kernel, "__module__", "")
    kw = dict(module=module, inputs=tuple(schema["inputs"]), outputs=tuple(schema["outputs"]),
              fused=any(f["name"] == FUSED for f in schema["fields"]))
    opdef = _replace(opdef, **kw)
    return _replace(opdef, kernel_attrs=_params(opdef.kernel, opdef, schema, "kernel"),
                    reference_attrs=_params(opdef.reference, opdef, schema, "reference"))


def register(opdef: OperatorDef) -> OperatorDef:
    """Declare ``opdef`` and add it to the registry (once per operator type)."""
    opdef = declare(opdef)
    if opdef.name in _REGISTRY:
        raise RuntimeError(f"{opdef.name} registered twice ({_REGISTRY[opdef.name].module}, "
                           f"{opdef.module})")
    _REGISTRY[opdef.name] = opdef
    return opdef


def _replace(opdef, **changes):
    values = {f: getattr(opdef, f) for f in opdef.__dataclass_fields__}
    values.update(changes)
    return OperatorDef(**values)


def load_all() -> dict:
    """Import every module of ``dmlsim.ops`` once (thread-safe); returns the registry."""
    global _LOADED
    if _LOADED:
        return _REGISTRY
    with _LOCK:
        if not _LOADED:
            ops = importlib.import_module(__name__.rsplit(".", 2)[0] + ".ops")
            for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{ops.__name__}.{info.name}")
            _LOADED = True
    return _REGISTRY


def get(name: str) -> OperatorDef | None:
    return load_all().get(name)


def names() -> list:
    return sorted(load_all())


def signature(inputs, attrs, ctx=True) -> inspect.Signature:
    """A kernel signature for builders that make kernels generically (``unary``)."""
    P = inspect.Parameter
    params = [P(n, P.POSITIONAL_OR_KEYWORD) for n in inputs]
    params += [P(n, P.KEYWORD_ONLY) for n in attrs]
    if ctx:
        params.append(P("ctx", P.KEYWORD_ONLY))
    return inspect.Signature(params)


def attributes(name: str) -> tuple:
    """The attribute fields of operator ``name`` (FusedActivation excluded)."""
    return tuple(f["name"] for f in OPERATORS[name]["fields"]
                 if f["kind"] == "attribute" and f["name"] != FUSED)


# ---- rules shared by many operators -------------------------------------------------------

def _present(spec: OpSpec, names):
    t = spec.tensor
    return [(n, t[n]) for n in names if t.get(n) is not None]


def same_sizes(*names):
    def rule(spec: OpSpec, check: Check):
        items = _present(spec, names)
        if not items:
            return
        n0, t0 = items[0]
        for n, t in items[1:]:
            if t.sizes != t0.sizes:
                check.fail(f"{n}.Sizes {list(t.sizes)} must equal {n0}.Sizes {list(t0.sizes)} "
                           "(same DimensionCount and Sizes)")
    rule.__doc__ = f"{', '.join(names)} must have the same DimensionCount and Sizes."
    return rule


def same_type(*names):
    def rule(spec: OpSpec, check: Check):
        items = _present(spec, names)
        if not items:
            return
        n0, t0 = items[0]
        for n, t in items[1:]:
            if t.data_type != t0.data_type:
                check.fail(f"{n}.DataType is {dtypes.name(t.data_type)} but {n0}.DataType is "
                           f"{dtypes.name(t0.data_type)}; they must match")
    rule.__doc__ = f"{', '.join(names)} must have the same DataType."
    return rule


def sizes_of(source: str, *outputs):
    """Shape rule: each of ``outputs`` has ``source``'s Sizes (element-wise operators)."""
    def output_sizes(spec: OpSpec, check: Check):
        t = spec.tensor.get(source)
        return {} if t is None else {o: Sizes(t.sizes, source) for o in outputs}
    output_sizes.__doc__ = f"{', '.join(outputs)} have {source}'s Sizes."
    return output_sizes
