"""IDMLDevice1::CompileGraph: a DAG of compiled operators (and constant data) as one
dispatchable and one XLA program.

The API layer hands over plain tuples (``GraphSpec``); this module checks every rule of
DML_GRAPH_DESC (``graph_rules``) and builds a :class:`CompiledGraph`:

- binding layout: one input slot per graph input (GraphInputIndex order), bound NONE when
  OWNED_BY_DML (stored in the persistent resource by the initializer) or unused; one output
  slot per graph output; the persistent resource holds the OWNED_BY_DML graph inputs and the
  nodes' own persistent data; no temporary resource (intermediates are values in the program).
- execution: the nodes run in a topological order inside one traced function. Each node's
  result is rounded to its output tensor's type and sealed (``views.sealed``), as a stored
  dispatch would be, so fusion across nodes cannot change the arithmetic. An edge whose two
  ends describe the tensor differently (dimension counts, types, strides: the page allows it
  when TotalTensorSizeInBytes matches) passes through a flat byte storage: the consumer reads
  the producer's bytes with its own desc.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from . import views
from .dml import EXEC_VOLATILE, CompiledOperator, Dispatchable, dispatch_steps, fault
from .graph_rules import GraphSpec, check_graph, node_label
from .typed_views import in_order
from .layout import OPTIONAL, REQUIRED, BindingLayout, Slot, align_up


@dataclass(frozen=True)
class Read:
    """A node input fed by a graph input: the graph input, the node, the slot, its desc."""
    graph_input: int
    node: int
    slot: int
    spec: object


class CompiledGraph(Dispatchable):
    kind = "compiled graph"
    compilable = True
    seals = True

    def __init__(self, device, g: GraphSpec, flags: int):
        super().__init__(device)
        self.flags = flags
        plan = check_graph(device, g, Read)
        self.order, self.sources, self.reads = plan.order, plan.sources, plan.reads
        self.outputs_from = plan.outputs
        self.nodes = [CompiledOperator(n.op, flags) if n.op is not None else None
                      for n in g.nodes]
        self.constants = {k: n.data for k, n in enumerate(g.nodes) if n.op is None}
        self.node_labels = [node_label(g, k) for k in range(len(g.nodes))]
        # What the program computes: two compilations of one graph share their programs.
        self._signature = ("graph", flags, tuple(n.signature if n is not None else None
                                                 for n in self.nodes),
                           tuple(self.order), tuple(sorted(self.sources.items())),
                           tuple(self.reads), tuple(sorted(self.constants.items())),
                           tuple(self.outputs_from))
        self.layout = self._layout(g)
        self.last_binding = None

    # ---- layout ------------------------------------------------------------------------
    def _layout(self, g: GraphSpec) -> BindingLayout:
        inputs, off = [], 0
        for gi in range(g.input_count):
            reads = [r for r in self.reads if r.graph_input == gi]
            label = f"input {gi} (graph input {gi})"
            if not reads:
                inputs.append(Slot(label, f"graph input {gi}", rule=OPTIONAL))
                continue
            spec = reads[0].spec
            if spec.owned_by_dml:
                # stored as its readers' operators keep it (a pre-transposed filter) when they
                # agree, else as bound
                kept = {self.nodes[r.node].layout.inputs[r.slot].stored for r in reads}
                stored = kept.pop() if len(kept) == 1 else spec
                inputs.append(Slot(label, f"graph input {gi}", None, spec, "forbidden",
                                   "the nodes read it with DML_TENSOR_FLAG_OWNED_BY_DML, so it "
                                   "is bound only to the operator initializer; bind NONE for "
                                   "execution", owned=True, need=spec.total_bytes,
                                   align=spec.offset_alignment, persistent_at=off, stored=stored))
                off += align_up(stored.total_bytes)
            else:
                inputs.append(Slot(label, f"graph input {gi}", None, spec, REQUIRED,
                                   need=spec.total_bytes, align=spec.offset_alignment))
        outputs = []
        for go, (k, o) in enumerate(self.outputs_from):
            spec = self.nodes[k].out_slots[o][2]
            outputs.append(Slot(f"output {go} (graph output {go})", f"graph output {go}", None,
                                spec, REQUIRED, need=spec.total_bytes,
                                align=spec.offset_alignment))
        self.node_persistent = {}
        for k, node in enumerate(self.nodes):
            extra = node.layout.persistent_size - sum(
                align_up(s.stored.total_bytes) for s in node.layout.inputs if s.owned) \
                if node is not None else 0
            if extra > 0:
                self.node_persistent[k] = off
                off += align_up(extra)
        return BindingLayout("compiled graph", f"the compiled graph ({len(self.nodes)} nodes)",
                             tuple(inputs), tuple(outputs), persistent_size=off)

    @property
    def volatile(self) -> bool:
        return bool(self.flags & EXEC_VOLATILE)

    @property
    def signature(self):
        return self._signature

    def cpu_compiler_options(self) -> dict:
        options: dict = {}
        for node in self.nodes:
            if node is not None:
                options.update(node.cpu_compiler_options())
        return options

    # ---- execution -----------------------------------------------------------------------
    def views(self, descs, slot):
        lay = self.layout
        ins, outs, _, persistent = lay.split(descs)
        views_in = []
        for r in self.reads:
            s, desc = lay.inputs[r.graph_input], ins[r.graph_input]
            if s.owned:
                if persistent is None:
                    raise fault(f"{lay.name}: {s.label} is OWNED_BY_DML but no persistent "
                                "resource is bound")
                views_in.append(slot(persistent, s.persistent_at, s.stored))
            elif desc is None:
                raise fault(f"{lay.name}: {s.label} is not bound")
            else:
                views_in.append(slot(desc, 0, r.spec))
        views_out = []
        for s, desc in zip(lay.outputs, outs):
            if desc is None:
                raise fault(f"{lay.name}: {s.label} is not bound")
            views_out.append(slot(desc, 0, s.spec))
        return views_in, views_out

    def kernel_with_seal(self, seal, shared=False):
        return lambda inputs: self.run_nodes(inputs, seal, shared)

    def kernel_call(self, inputs):
        return self.run_nodes(inputs, None)

    def run_nodes(self, read_values, seal, shared=False):
        """Every node in topological order; returns the graph outputs' values. With ``shared``
        the node outputs :meth:`_stored_once` names are sealed by ``views.sealed_shared``."""
        produced = {}
        stored = self._stored_once() if shared and seal is not None else {}
        for k in self.order:
            node = self.nodes[k]
            if node is None:
                continue
            ins = []
            for i, (_, _, spec) in enumerate(node.in_slots):
                src = self.sources.get((k, i))
                if src is None or spec is None:
                    ins.append(None)
                elif src[0] == "input":
                    ins.append(read_values[src[1]])
                elif src[0] == "node":
                    ins.append(_reinterpret(produced[src[1:]], self._out_spec(*src[1:]), spec))
                else:
                    ins.append(_constant(self.constants[src[1]], spec))
            outs = node.kernel_call(ins)
            for o, ((_, _, spec), value) in enumerate(zip(node.out_slots, outs)):
                if spec is None or value is None:
                    continue
                value = jnp.asarray(value)
                if value.dtype != spec.np_dtype:
                    value = value.astype(spec.np_dtype)
                if value.shape != spec.sizes:
                    value = jnp.broadcast_to(value, spec.sizes)
                if seal is not None:
                    value = _stored(value, seal, stored[(k, o)]) if (k, o) in stored else \
                        views.sealed(value, seal)
                produced[(k, o)] = value
        return [produced[(k, o)] for k, o in self.outputs_from]

    def _stored_once(self) -> dict:
        """{node output: dimension order or None}: the node outputs that several nodes read,
        one of them not element-wise (a GEMM, a reduction, a convolution, a slice): a
        LayerNormalization's result that the next GEMMs and the residual ADD both read. Those
        are sealed so that XLA stores them once (``views.sealed_shared``): MiniLM's CPU run 46
        -> 33 ms. Results that only element-wise nodes read together (a HardSwish's x * (x +
        3)) fuse with them instead: storing those made PaddleOCR rec 15% slower. And the inputs
        a node's operator asks to read stored (``OperatorDef.cpu_stored_inputs``: a
        convolution's), in the dimension order the first such reader asks for."""
        readers, stored = collections.defaultdict(list), {}
        for (k, i), src in sorted(self.sources.items()):
            if src is not None and src[0] == "node":
                readers[src[1:]].append(self.nodes[k].opdef.name)
                asks = self.nodes[k].cpu_stored_inputs()
                if i in asks and stored.get(src[1:]) is None:
                    stored[src[1:]] = asks[i]
        for out, names in readers.items():
            if out not in stored and len(names) > 1 and not all(
                    n.startswith(("DML_OPERATOR_ELEMENT_WISE_", "DML_OPERATOR_ACTIVATION_"))
                    for n in names):
                stored[out] = None
        return stored

    def cpu_input_orders(self) -> dict:
        """{graph input index: dimension order}: the order the first node reading a graph
        input directly asks for it in (``CompiledOperator.cpu_input_orders``)."""
        orders: dict = {}
        for (k, i), src in sorted(self.sources.items()):
            if src is not None and src[0] == "input" and src[1] not in orders:
                order = self.nodes[k].cpu_input_orders().get(i)
                if order is not None:
                    orders[src[1]] = order
        return orders

    def _out_spec(self, k, o):
        return self.nodes[k].out_slots[o][2]

    def build(self, b, descs) -> bool:
        if not self.initialized:
            raise fault(f"{self.layout.name}: the compiled graph was executed before an "
                        "operator initializer initialized it")
        return dispatch_steps(self, b, descs)


def _stored(value, seal, order):
    """``value`` sealed to be stored once (``views.sealed_shared``), in dimension ``order``
    when one is asked for: transposed, stored, and transposed back, which XLA folds into the
    producer (it writes that layout) and into the readers that want it (they read it as is)."""
    if order is None or len(order) != value.ndim:
        return views.sealed_shared(value, seal)
    return in_order(views.sealed_shared(jnp.transpose(value, order), seal), order)


def _reinterpret(value, src_spec, dst_spec):
    """``value`` (as ``src_spec`` describes it) read back with ``dst_spec``'s desc."""
    if src_spec.sizes == dst_spec.sizes and src_spec.data_type == dst_spec.data_type and \
            src_spec.element_strides == dst_spec.element_strides:
        return value
    n = max(src_spec.total_bytes, dst_spec.total_bytes)
    storage = jnp.zeros((n + 7) // 8 * 8, jnp.uint8)
    storage = views.write_view(storage, src_spec, 0, value)
    return views.read_view(storage, dst_spec, 0)


def _constant(data: bytes, spec):
    core = views.read_constant(data, spec)
    if core is not None:
        return jnp.broadcast_to(jnp.asarray(core), spec.sizes)
    buf = np.zeros(max(spec.total_bytes, len(data)) + 8, np.uint8)
    buf[:len(data)] = np.frombuffer(data, np.uint8)
    return views.read_view(jnp.asarray(buf), spec, 0)
