"""``dmlsim.onnx.InferenceSession``: ONNX Runtime's Python session API over DML plans.

ONNX Runtime's DirectML provider compiles a DML graph once the shapes are known: for a model
with symbolic or unknown dimensions, when a run's feeds arrive. The session does the same: each
distinct input signature (the feeds' shapes and element types, plus the values of the small
inputs that DML needs as desc fields, read back on the CPU) gets its own lowered, compiled
``Plan``, kept in a per-session LRU cache of ``SessionOptions.plan_cache_size`` plans. A shape
seen again reuses its plan: no lowering, no CompileGraph. A model whose every input is static
(after the free-dimension overrides) is planned in the constructor, as ORT does.

What ORT's API gives, dmlsim gives: ``get_inputs()`` / ``get_outputs()`` NodeArgs (``name``,
``shape`` with ints, dim names and None, ``type`` such as ``'tensor(float)'``),
``get_modelmeta()``, ``run(output_names, input_feed, run_options=None)``, ``SessionOptions``
with the free-dimension overrides, ``graph_optimization_level`` and session config entries.
A feed of the wrong element type, rank or fixed dimension is E_INVALIDARG naming the input with
the expected and the given type or shape (ORT: INVALID_ARGUMENT); nothing is cast silently."""
from __future__ import annotations

import collections
import enum
from typing import NamedTuple

import numpy as np

from .._api import public as dml
from . import onnx_model
from . import onnx_partition, onnx_rewrite, onnx_rewrite_gemm
from .device_run import DeviceTensor
from .onnx_iobinding import IOBinding, payload
from .onnx_lower import NeedsConstant, fail
from .onnx_partition import EXECUTOR_KEY, FALLBACK_KEY, RULES_KEY
from .onnx_plan import make_device


class GraphOptimizationLevel(enum.IntEnum):
    """ORT's levels. ORT_DISABLE_ALL keeps every ONNX node a DML operator of its own; any other
    level folds a Conv's constant BatchNormalization, Mul and Add into its weights and a
    MatMul's bias Add into a Gemm (ORT's basic-level rewrites, ``onnx_rewrite`` and
    ``onnx_rewrite_gemm``) and activations into their producer's FusedActivation, as the DML
    provider's fusion does."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


PLAN_CACHE_KEY = "dmlsim.plan_cache_size"   # session config entry, as ORT's string config


class SessionOptions:
    """ORT's SessionOptions, the parts that change what dmlsim does: free-dimension overrides,
    ``graph_optimization_level``, ``plan_cache_size`` (plans kept per session, LRU; also the
    config entry ``dmlsim.plan_cache_size``), ``feature_level`` (DML_FEATURE_LEVEL, e.g.
    "5_1"; None for dmlsim's default) and ``execution_flags`` (the DML_EXECUTION_FLAGS every
    plan is compiled with, e.g. DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION: what a
    driver may choose for FLOAT16 math)."""

    def __init__(self):
        self.free_dimension_overrides_by_name: dict = {}
        self.free_dimension_overrides_by_denotation: dict = {}
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.plan_cache_size = 16
        self.feature_level = None
        self.execution_flags = 0  # DML_EXECUTION_FLAGS each plan's CompileGraph gets
        self._config: dict = {}

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self.free_dimension_overrides_by_name[_dim_key(
            "add_free_dimension_override_by_name", "dim_name", dim_name)] = _dim_value(
            "add_free_dimension_override_by_name", dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        self.free_dimension_overrides_by_denotation[_dim_key(
            "add_free_dimension_override_by_denotation", "dim_denotation", dim_denotation)] = \
            _dim_value("add_free_dimension_override_by_denotation", dim_value)

    def add_session_config_entry(self, key, value):
        if not isinstance(key, str) or not isinstance(value, str):
            fail(dml.E_INVALIDARG, "SessionOptions.add_session_config_entry: key and value are "
                                   f"strings, not {type(key).__name__} and "
                                   f"{type(value).__name__}")
        if key == PLAN_CACHE_KEY:
            self.plan_cache_size = _count(key, value)
        allowed = _CHOICES.get(key)
        if allowed is not None and value not in allowed:
            fail(dml.E_INVALIDARG, f"SessionOptions.add_session_config_entry: {key} is "
                                   f"{value!r}; one of {', '.join(map(repr, allowed))}")
        self._config[key] = value

    def get_session_config_entry(self, key):
        if key not in self._config:
            fail(dml.E_INVALIDARG, f"SessionOptions.get_session_config_entry: no entry '{key}'")
        return self._config[key]


_CHOICES = {RULES_KEY: ("dmlsim", "dml_ep"), EXECUTOR_KEY: ("reference", "onnxruntime"),
            FALLBACK_KEY: ("0", "1")}


def _dim_key(method, what, value):
    if not isinstance(value, str) or not value:
        fail(dml.E_INVALIDARG, f"SessionOptions.{method}: {what} is {value!r}; a non-empty "
                               "string")
    return value


def _dim_value(method, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        fail(dml.E_INVALIDARG, f"SessionOptions.{method}: dim_value is {value!r}; a positive "
                               "integer (DML tensors have no empty dimensions)")
    return int(value)


def _count(what, value):
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if isinstance(value, (bool, float)) or n < 1:
        fail(dml.E_INVALIDARG, f"SessionOptions: {what} is {value!r}; a positive integer")
    return n


class NodeArg(NamedTuple):
    """ORT's NodeArg: ``name``, ``type`` ('tensor(float)') and ``shape`` (ints, dim names,
    None where a dimension has neither; None for an input declared without a shape)."""

    name: str
    type: str
    shape: list | None

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata(NamedTuple):
    producer_name: str
    graph_name: str
    domain: str
    description: str
    graph_description: str
    version: int
    custom_metadata_map: dict


class PlanCacheInfo(NamedTuple):
    """As ``functools.lru_cache``'s cache_info: hits, misses (lowerings and CompileGraphs),
    evictions, plans held now and the bound."""

    hits: int
    misses: int
    evictions: int
    currsize: int
    maxsize: int


def _node_arg(spec) -> NodeArg:
    return NodeArg(spec.name, onnx_model.type_string(spec.elem_type), spec.shape())


class InferenceSession:
    """``InferenceSession(path_or_bytes, sess_options=None, providers=None)``: a path (str or
    os.PathLike; external data beside it), the model's bytes, or an onnx.ModelProto.
    ``providers`` is accepted for ORT's signature: every partition runs on dmlsim's DML
    device. ``device`` (an IDMLDevice) and ``feature_level`` are dmlsim's own."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 *, device=None, feature_level=None, **kwargs):
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            fail(dml.E_INVALIDARG, "InferenceSession: sess_options is a "
                                   f"{type(sess_options).__name__}, not a SessionOptions")
        if kwargs:
            fail(dml.E_INVALIDARG, f"InferenceSession: unknown keyword argument "
                                   f"{sorted(kwargs)[0]!r}")
        self._options = opts = sess_options if sess_options is not None else SessionOptions()
        bound = _count("SessionOptions.plan_cache_size", opts.plan_cache_size)
        source, self._what = onnx_model.load(path_or_bytes)
        self._base_dir = onnx_model.base_dir(path_or_bytes)
        self._model = onnx_model.override_free_dimensions(
            source, opts.free_dimension_overrides_by_name,
            opts.free_dimension_overrides_by_denotation)
        if opts.graph_optimization_level != GraphOptimizationLevel.ORT_DISABLE_ALL:
            self._model = onnx_rewrite.fold_convolutions(self._model, self._base_dir)
            self._model = onnx_rewrite_gemm.fuse_matmul_add(self._model)
        self._inputs = onnx_model.runtime_inputs(self._model)
        self._outputs = onnx_model.specs(self._model.graph.output)
        self._providers = list(providers or ["DmlExecutionProvider"])
        level = feature_level if feature_level is not None else opts.feature_level
        self.device = device if device is not None else make_device(level)
        self._plans: collections.OrderedDict = collections.OrderedDict()
        self._bound = bound
        self._hits = self._misses = self._evictions = 0
        self.constants: set = set()  # inputs read on the CPU (DML desc fields)
        self.last_plan = None
        if all(s.dims is not None and all(d.value is not None for d in s.dims)
               for s in self._inputs):
            shapes = {s.name: tuple(d.value for d in s.dims) for s in self._inputs}
            try:
                self._plan(self._key({s.name: (shapes[s.name], s.dtype) for s in self._inputs},
                                     {}), shapes, {})
            except NeedsConstant:
                pass  # planned at the first run, with those inputs' values

    # ---- ORT's API --------------------------------------------------------------------------
    def get_inputs(self) -> list:
        return [_node_arg(s) for s in self._inputs]

    def get_outputs(self) -> list:
        return [_node_arg(s) for s in self._outputs]

    def get_overridable_initializers(self) -> list:
        return []

    def get_providers(self) -> list:
        return list(self._providers)

    def get_session_options(self) -> SessionOptions:
        return self._options

    def get_modelmeta(self) -> ModelMetadata:
        m = self._model
        return ModelMetadata(m.producer_name, m.graph.name, m.domain, m.doc_string,
                             m.graph.doc_string, int(m.model_version),
                             {p.key: p.value for p in m.metadata_props})

    @property
    def input_names(self) -> list:
        return [s.name for s in self._inputs]

    @property
    def output_names(self) -> list:
        return [s.name for s in self._outputs]

    def run(self, output_names, input_feed, run_options=None) -> list:
        """ORT's run: ``output_names`` None (or empty) for all outputs in the model's order;
        ``input_feed`` {input name: array or OrtValue}. Returns a list of NumPy arrays."""
        wanted = self._wanted(output_names)
        feeds = self._feeds(input_feed)
        plan = self._plan_for(feeds)
        return plan.run(wanted, {n: _host(a) for n, a in feeds.items()
                                 if n not in self.constants})

    def io_binding(self) -> IOBinding:
        """ORT's IOBinding of this session (inputs and outputs kept on the device)."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None) -> None:
        """Run with ``iobinding``'s inputs; its outputs land where they are bound (on 'dml':
        left on the device, no readback)."""
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            fail(dml.E_INVALIDARG, "run_with_iobinding: iobinding is not an IOBinding of this "
                                   "session (session.io_binding())")
        wanted = list(iobinding._outputs)
        if not wanted:
            fail(dml.E_INVALIDARG, "run_with_iobinding: no output is bound (bind_output or "
                                   "bind_ortvalue_output); at least one output must be")
        feeds = self._feeds(dict(iobinding._inputs))
        plan = self._plan_for(feeds)
        feeds = {n: a for n, a in feeds.items() if n not in self.constants}
        if hasattr(plan, "run_device"):  # one DML graph: its device-resident list
            results = plan.run_device(wanted, feeds)
        else:  # partitioned (CPU nodes between): through the host
            results = plan.run(wanted, {n: _host(a) for n, a in feeds.items()})
        iobinding._store(dict(zip(wanted, results)))

    def placement(self):
        """Where each node of the most recent plan runs (``onnx_partition.Report``): DML, CPU
        (with the reason) or folded at plan time; the steps and the copies between them."""
        if self.last_plan is None:
            fail(dml.E_INVALIDARG, f"placement: {self._what} has dynamic dimensions "
                                   f"({self._dynamic()}); run it once, or pin them with "
                                   "SessionOptions.add_free_dimension_override_by_name")
        p = self.last_plan
        return onnx_partition.report(p.lowering, p.steps,
                                     onnx_partition.Transfers(*p.transfers))

    def plan_cache_info(self) -> PlanCacheInfo:
        return PlanCacheInfo(self._hits, self._misses, self._evictions, len(self._plans),
                             self._bound)

    def describe(self) -> str:
        """The DML graph of the most recent plan (``dmlsim lower``)."""
        if self.last_plan is None:
            fail(dml.E_INVALIDARG, f"describe: {self._what} has dynamic dimensions "
                                   f"({self._dynamic()}); run it once, or pin them with "
                                   "SessionOptions.add_free_dimension_override_by_name")
        return self.last_plan.describe()

    @property
    def lowering(self):
        return None if self.last_plan is None else self.last_plan.lowering

    def __repr__(self):
        ins = ", ".join(f"{a.name}: {a.type} {a.shape}" for a in self.get_inputs())
        outs = ", ".join(f"{a.name}: {a.type} {a.shape}" for a in self.get_outputs())
        plans = "; ".join(", ".join(f"{n}{list(s)}" for n, s, _ in key[0])
                          for key in self._plans) or "none yet"
        return (f"<dmlsim.onnx.InferenceSession {self._what}\n  inputs: {ins}\n"
                f"  outputs: {outs}\n  plans ({len(self._plans)} of {self._bound}): {plans}>")

    # ---- feeds ------------------------------------------------------------------------------
    def _dynamic(self) -> str:
        names = sorted({str(d.param or "?") for s in self._inputs for d in (s.dims or ())
                        if d.value is None})
        return ", ".join(f"'{n}'" for n in names) or "an input without a shape"

    def _wanted(self, output_names) -> list:
        if output_names is None or (isinstance(output_names, (list, tuple)) and
                                    not output_names):
            return self.output_names
        if isinstance(output_names, str) or not isinstance(output_names, (list, tuple)):
            fail(dml.E_INVALIDARG, f"run: output_names is {output_names!r}; a list of output "
                                   "names or None")
        known = set(self.output_names)
        for n in output_names:
            if n not in known:
                fail(dml.E_INVALIDARG, f"run: invalid output name {n!r} (INVALID_ARGUMENT); "
                                       f"outputs: {', '.join(self.output_names)}")
        return list(output_names)

    def _feeds(self, input_feed) -> dict:
        if not isinstance(input_feed, dict):
            fail(dml.E_INVALIDARG, f"run: input_feed is a {type(input_feed).__name__}; a dict "
                                   "{input name: array}")
        known = {s.name: s for s in self._inputs}
        for n in input_feed:
            if n not in known:
                fail(dml.E_INVALIDARG, f"run: invalid input name {n!r} (INVALID_ARGUMENT); "
                                       f"inputs: {', '.join(known)}")
        missing = [n for n in known if n not in input_feed]
        if missing:
            fail(dml.E_INVALIDARG, f"run: required inputs {missing} are missing from the input "
                                   f"feed ({sorted(input_feed)})")
        feeds, bound = {}, {}
        for name, spec in known.items():
            feeds[name] = a = self._array(spec, input_feed[name])
            for k, d in enumerate(spec.dims or ()):
                if d.value is not None and a.shape[k] != d.value:
                    fail(dml.E_INVALIDARG, f"run: invalid dimensions for input '{name}': index "
                                           f"{k} got {a.shape[k]}, expected {d.value} (shape "
                                           f"{list(a.shape)}, model {spec.shape()})")
                if d.param and d.param != onnx_model.UNNAMED:
                    first = bound.setdefault(d.param, (a.shape[k], name))
                    if first[0] != a.shape[k]:
                        fail(dml.E_INVALIDARG, f"run: dimension '{d.param}' is {first[0]} in "
                                               f"input '{first[1]}' and {a.shape[k]} in "
                                               f"input '{name}'")
        return feeds

    @staticmethod
    def _array(spec, value):
        want = spec.dtype
        if value is None:
            fail(dml.E_INVALIDARG, f"run: input '{spec.name}' is None; an array of "
                                   f"{onnx_model.type_string(spec.elem_type)}")
        value = payload(value)  # an OrtValue's array (on the device: a DeviceTensor)
        if isinstance(value, (np.ndarray, DeviceTensor)):
            a = value
        else:  # a list or scalar takes the input's type, as ORT converts it
            try:
                a = np.asarray(value, dtype=want)
            except (TypeError, ValueError, OverflowError) as e:
                fail(dml.E_INVALIDARG, f"run: input '{spec.name}' cannot be read as "
                                       f"{onnx_model.type_string(spec.elem_type)}: {e}")
        if want is not None and a.dtype != want:
            given = onnx_model.type_string(onnx_model.elem_type_of(a.dtype))
            fail(dml.E_INVALIDARG, f"run: input '{spec.name}' has element type {given}; the "
                                   f"model expects {onnx_model.type_string(spec.elem_type)} "
                                   "(nothing is cast)")
        if spec.dims is not None and a.ndim != len(spec.dims):
            fail(dml.E_INVALIDARG, f"run: invalid rank for input '{spec.name}': got {a.ndim} "
                                   f"(shape {list(a.shape)}), expected {len(spec.dims)} "
                                   f"(shape {spec.shape()})")
        return a

    # ---- plans ------------------------------------------------------------------------------
    def _plan_for(self, feeds):
        while True:
            shapes = {n: a.shape for n, a in feeds.items() if n not in self.constants}
            consts = {n: _host(feeds[n]) for n in sorted(self.constants)}
            key = self._key({n: (feeds[n].shape, feeds[n].dtype) for n in shapes}, consts)
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                self._hits += 1
                self.last_plan = plan
                return plan
            try:
                return self._plan(key, shapes, consts,
                                  {n: feeds[n].dtype for n in shapes})
            except NeedsConstant as e:
                wanted = {n for n in (e.name, *e.inputs) if n in feeds} - self.constants
                if not wanted:
                    raise
                self.constants |= wanted

    @staticmethod
    def _key(signature, consts):
        """The plan cache's key: each input's (shape, dtype), and the values read on the CPU."""
        return (tuple((n, tuple(shape), np.dtype(dtype).str)
                      for n, (shape, dtype) in signature.items()),
                tuple((n, a.shape, a.dtype.str, a.tobytes()) for n, a in consts.items()))

    def _plan(self, key, shapes, consts, dtypes=None):
        model = onnx_model.specialize(self._model, shapes, consts, dtypes)
        fuse = self._options.graph_optimization_level != GraphOptimizationLevel.ORT_DISABLE_ALL
        flags = self._options.execution_flags
        if isinstance(flags, bool) or not isinstance(flags, (int, np.integer)) or flags < 0:
            fail(dml.E_INVALIDARG, f"SessionOptions.execution_flags is {flags!r}; "
                                   "DML_EXECUTION_FLAGS (an integer)")
        cfg = self._options._config
        try:
            plan = onnx_partition.build(
                model, self.device, fuse=fuse, base_dir=self._base_dir, flags=int(flags),
                rules=cfg.get(RULES_KEY, "dmlsim"), executor=cfg.get(EXECUTOR_KEY, "reference"),
                fallback=cfg.get(FALLBACK_KEY, "0") != "1",
                nested=lambda m: InferenceSession(m, self._options, device=self.device))
        except dml.HResultError:
            raise
        except Exception as e:  # noqa: BLE001 -- a model its own schema does not allow
            fail(dml.E_INVALIDARG, f"{self._what} is malformed (INVALID_GRAPH): "
                                   f"{type(e).__name__}: {e}")
        self._misses += 1
        self._plans[key] = plan
        while len(self._plans) > self._bound:
            self._plans.popitem(last=False)
            self._evictions += 1
        self.last_plan = plan
        return plan


def _host(value):
    """A feed on the host: a DeviceTensor's values copied back, anything else as it is."""
    return value.to_numpy() if isinstance(value, DeviceTensor) else value


