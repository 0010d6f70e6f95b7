"""ONNX Runtime's graph partitioning for ``dmlsim.onnx``: DML partitions and CPU steps.

ORT never runs a model on the DML provider alone: the nodes the DML EP takes form DML
partitions (one compiled DML graph each), the others run on the CPU provider, with copies at the
borders. A plan here does the same, per input signature:

- ``Lowering`` with a ``Placement`` is a probe: every node dmlsim lowers is a DML node, and one it
  cannot (no rule, a variant the rule refuses, a desc DML refuses, a desc field only known at run
  time, a shape known only at run time) is a CPU node, with the reason. Under the rules
  ``"dml_ep"`` (session config ``dmlsim.placement_rules``) a node ORT's DML EP has no kernel for
  (``onnx_dml_ep``: operator, since-version, tensor types) is a CPU node too, as ORT places it;
  under the default ``"dmlsim"`` such a node stays on DML and the report says where ORT differs.
- Nodes are grouped into steps in topological order, each node joining the earliest step of its
  kind that its inputs allow, so independent DML work is not split by a CPU node.
- A DML step is a sub-model lowered and compiled as one ``Plan`` (CompileGraph); a CPU step is a
  sub-model run by ``onnx.reference.ReferenceEvaluator``, or by ONNX Runtime's CPU provider with
  ``dmlsim.cpu_executor=onnxruntime``. Values cross the borders as a DirectML application moves
  them: each DML step writes its inputs through UPLOAD buffers and reads its outputs back through
  READBACK buffers (``Prepared``); ``PartitionedPlan.transfers`` counts them.
- Nodes whose inputs are all constants fold on the CPU at plan time, as ORT's constant folding.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from .._api import public as dml
from . import onnx_dml_ep
from .onnx_lower import Lowering, fail
from .onnx_plan import ACTIVATIONS, RULES, Plan

RULES_KEY = "dmlsim.placement_rules"     # "dmlsim" (default) or "dml_ep"
EXECUTOR_KEY = "dmlsim.cpu_executor"     # "reference" (default) or "onnxruntime"
FALLBACK_KEY = "session.disable_cpu_ep_fallback"  # ORT's key: "1" makes fallback an error


class Placement:
    """Which nodes the probe gives to the CPU before trying them: none under the ``"dmlsim"``
    rules, those ORT's DML EP has no kernel for under ``"dml_ep"``."""

    def __init__(self, rules="dmlsim"):
        if rules not in ("dmlsim", "dml_ep"):
            fail(dml.E_INVALIDARG, f"session config {RULES_KEY} is {rules!r}; 'dmlsim' or "
                                   "'dml_ep'")
        self.rules = rules

    def refuses(self, lowering, node) -> str:
        if self.rules != "dml_ep":
            return ""
        takes, why, _ = ep_verdict(lowering, node)
        return why if not takes else ""


def ep_verdict(lowering, node):
    """``onnx_dml_ep.verdict`` for a node of ``lowering``'s model."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    opset = next((o.version for o in lowering.model.opset_import
                  if (o.domain if o.domain != "ai.onnx" else "") == domain), 1)

    def elem_type(name):
        vi = lowering.types.get(name)
        return vi.type.tensor_type.elem_type if vi is not None and \
            vi.type.HasField("tensor_type") else 0
    return onnx_dml_ep.verdict(node, opset, elem_type)


class Row(NamedTuple):
    """One node of the placement report."""

    index: int
    name: str
    op_type: str
    device: str        # "DML", "CPU" or "folded" (constant, computed at plan time)
    step: int | None   # the step (partition) it runs in
    reason: str        # why it runs on the CPU; for DML, where ORT's DML EP would differ
    fused: str         # the activation fused into it ("Relu 'r1'"), or ""


class Transfers(NamedTuple):
    """Copies through the faithful API: UPLOAD writes into DML steps, READBACKs out of them."""

    uploads: int
    upload_bytes: int
    readbacks: int
    readback_bytes: int


class Step:
    """A run of nodes on one device: its sub-model, inputs it reads and outputs it gives."""

    def __init__(self, kind, index):
        self.kind, self.index = kind, index
        self.nodes: list = []       # (node index, node)
        self.inputs: list = []
        self.outputs: list = []
        self.run = None             # (inputs dict) -> list of arrays


def _reads(node) -> list:
    """Every value ``node`` reads, its subgraphs' outer references included."""
    out = [n for n in node.input if n]
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            inner = {o for m in g.node for o in m.output} | {i.name for i in g.input} | \
                {i.name for i in g.initializer}
            out += [n for m in g.node for n in _reads(m) if n not in inner]
    return out


def schedule(L) -> list:
    """The steps of ``L``'s probe: each node joins the earliest step of its kind that comes
    after every step producing one of its inputs."""
    nodes = L.model.graph.node
    activation_of = dict(L.fused)
    fused_into = {k: p for p, k in activation_of.items()}
    steps: list = []
    made: dict = {}  # value -> step index
    by_late: set = set()  # values computed by nodes planned per run
    needed = {o.name for o in L.model.graph.output}
    live = set()
    for k in range(len(nodes) - 1, -1, -1):  # nodes no graph output depends on are pruned
        if any(o in needed for o in nodes[k].output):
            live.add(k)
            needed.update(_reads(nodes[k]))
    for k, node in enumerate(nodes):
        if k in L.folded or k not in live or node.op_type == "Constant" and k not in L.cpu:
            continue
        kind = "CPU" if k in L.cpu else "DML"
        if k in fused_into:  # an activation fused into its producer runs with it
            j = made[nodes[fused_into[k]].output[0]]
        else:  # a node planned per run starts after the steps computing what it reads back
            late = k in L.deferred
            after = max([made.get(n, -1) + (1 if late and n in made and n not in by_late else 0)
                         for n in _reads(node)] + [-1])
            j = next((s.index for s in steps if s.kind == kind and s.index >= after), None)
            if j is None:
                steps.append(Step(kind, len(steps)))
                j = len(steps) - 1
        steps[j].nodes.append((k, node))
        for o in node.output:
            if o:
                made[o] = j
                if k in L.deferred:
                    by_late.add(o)
    for s in steps:
        s.nodes.sort(key=lambda kn: kn[0])  # the model's order is topological
    graph_outputs = {o.name for o in L.model.graph.output}
    for s in steps:
        inside = {o for _, n in s.nodes for o in n.output if o}
        s.inputs = list(dict.fromkeys(n for _, node in s.nodes for n in _reads(node)
                                      if n not in inside))
        later = {n for t in steps if t.index != s.index for _, node in t.nodes
                 for n in _reads(node)}
        s.outputs = [o for _, n in s.nodes for o in n.output
                     if o and (o in later or o in graph_outputs)]
    return steps


def _value_info(L, name, static=True, bare=False):
    vi = L.types.get(name)
    if vi is None or not vi.type.HasField("tensor_type") or \
            not vi.type.tensor_type.elem_type:  # typed by the executor / when values arrive
        return onnx.ValueInfoProto(name=name) if bare else \
            helper.make_tensor_value_info(name, 0, None)
    if not static:
        return helper.make_tensor_value_info(name, vi.type.tensor_type.elem_type, None)
    return vi


def sub_model(L, step) -> onnx.ModelProto:
    """The nodes of ``step`` as a model: constants it reads become initializers (an original
    initializer keeps its external-data reference), the rest inputs typed by shape inference."""
    originals = {i.name: i for i in L.model.graph.initializer}
    inits, inputs = [], []
    for name in step.inputs:
        v = L.values.get(name)
        if name in originals:
            inits.append(originals[name])
        elif v is not None and v.const is not None:
            arr = v.const
            inits.append(numpy_helper.from_array(np.asarray(arr), name))
        else:
            inputs.append(_value_info(L, name, static=name not in L.unknown))
    outputs = [_value_info(L, o, static=step.kind == "DML" and o not in L.late,
                           bare=step.kind == "CPU") for o in step.outputs]
    names = {n for _, node in step.nodes for n in list(node.input) + list(node.output)}
    infos = [vi for vi in L.model.graph.value_info if vi.name in names and
             vi.name not in L.unknown] if step.kind == "DML" else []
    graph = helper.make_graph([n for _, n in step.nodes], f"{step.kind.lower()}{step.index}",
                              inputs, outputs, inits, value_info=infos)
    model = helper.make_model(graph, opset_imports=L.model.opset_import)
    model.ir_version = L.model.ir_version
    return model


def cpu_runner(model, step, executor, why=""):
    """A callable running ``model`` (a CPU step) with ``executor``; ``why`` says why its nodes
    left DML, for the message when no CPU kernel exists either. An input shape inference could
    not type (after a contrib operator) is typed by the first values it receives."""
    where = f"CPU step {step.index} ({', '.join(sorted({n.op_type for _, n in step.nodes}))}" \
        f"{'; on the CPU because ' + why if why else ''})"
    if executor not in ("reference", "onnxruntime"):
        fail(dml.E_INVALIDARG, f"session config {EXECUTOR_KEY} is {executor!r}; 'reference' or "
                               "'onnxruntime'")
    untyped = [vi.name for vi in model.graph.input if not vi.type.tensor_type.elem_type]
    made: dict = {}

    def build(feeds):
        m = model
        if untyped:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            for vi in m.graph.input:
                if vi.name in feeds and not vi.type.tensor_type.elem_type:
                    vi.type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(
                        np.asarray(feeds[vi.name]).dtype)
        return _executor(m, step, executor, where)

    def run(feeds):
        key = tuple(np.asarray(feeds[n]).dtype.str for n in untyped if n in feeds)
        if key not in made:
            made.clear()  # one signature kept: a new dtype is rare
            made[key] = build(feeds)
        return made[key](feeds)
    if not untyped:
        made[()] = build({})
    return run


def _executor(model, step, executor, where):
    first = step.nodes[0][1]
    if executor == "onnxruntime":
        try:
            import onnxruntime as ort
        except ImportError:
            fail(dml.E_NOTIMPL, f"{where}: {EXECUTOR_KEY}=onnxruntime but onnxruntime is not "
                                "installed")
        try:
            sess = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 -- ORT says why
            fail(dml.E_NOTIMPL, f"{where}: ONNX Runtime's CPU provider cannot run it: {e}")
        names = [o.name for o in model.graph.output]

        def run_ort(feeds):
            try:
                return sess.run(names, feeds)
            except Exception as e:  # noqa: BLE001 -- reported as the CPU step's failure
                fail(dml.E_FAIL, f"{where} failed on the CPU (onnxruntime): {e}")
        return run_ort
    try:
        ev = ReferenceEvaluator(model)
    except Exception as e:  # noqa: BLE001 -- e.g. a com.microsoft operator it lacks
        fail(dml.E_NOTIMPL, f"{where}: onnx.reference has no CPU kernel for node "
                            f"'{first.name}' ({first.domain or 'ai.onnx'}.{first.op_type}): "
                            f"{type(e).__name__}: {e}; session config {EXECUTOR_KEY}="
                            "onnxruntime runs it with ONNX Runtime's CPU provider")

    def run_reference(feeds):
        try:
            return ev.run(None, feeds)
        except Exception as e:  # noqa: BLE001 -- reported as the CPU step's failure
            fail(dml.E_FAIL, f"{where} failed on the CPU (onnx.reference): "
                             f"{type(e).__name__}: {e}")
    return run_reference


class PartitionedPlan:
    """One input signature's model cut into DML partitions (each a compiled ``Plan``) and CPU
    steps, run in order; what ORT's session runs when its DML EP takes only part of a graph."""

    def __init__(self, L, device, fuse, base_dir, flags, executor="reference", nested=None):
        self.device, self.lowering = device, L
        self.steps = schedule(L)
        self._counts = [0, 0, 0, 0]
        for s in self.steps:
            m = sub_model(L, s)
            s.session = None
            if s.kind == "DML" and (any(k in L.deferred for k, _ in s.nodes) or
                                    any(n in L.late for n in s.inputs)):
                # shapes or desc fields known only at run time: a session of its own plans
                # this partition per input signature (and per value read on the CPU)
                s.session = nested(m)
                s.run = (lambda ss, names: lambda feeds: ss.run(names, feeds))(s.session,
                                                                                s.outputs)
            elif s.kind == "DML":
                s.plan = Plan(m, device, fuse=fuse, base_dir=base_dir, flags=flags)
                s.run = (lambda p, names: lambda feeds: p.run(names, feeds))(s.plan, s.outputs)
            else:
                s.run = cpu_runner(m, s, executor, "; ".join(
                    f"'{n.name or n.op_type}': {cpu_reason(L, k)}" for k, n in s.nodes))
        self._consts = {o.name: L.values[o.name].const for o in L.model.graph.output
                        if o.name in L.values and L.values[o.name].const is not None}

    @property
    def transfers(self) -> Transfers:
        return Transfers(*self._counts)

    def run(self, wanted, feeds) -> list:
        env = dict(feeds)
        for s in self.steps:
            ins = {n: env[n] for n in s.inputs if n in env}
            outs = s.run(ins)
            if s.kind == "DML":
                self._counts[0] += len(ins)
                self._counts[1] += sum(np.asarray(a).nbytes for a in ins.values())
                self._counts[2] += len(outs)
                self._counts[3] += sum(np.asarray(a).nbytes for a in outs)
            env.update(zip(s.outputs, (np.asarray(a) for a in outs)))
        return [env[n] if n in env else self._consts[n] for n in wanted]

    def describe(self) -> str:
        """Each DML partition's graph (``Plan.describe``)."""
        parts = []
        for s in self.steps:
            if s.kind == "DML":
                parts.append(f"DML partition {s.index}:\n{s.plan.describe()}")
        return "\n\n".join(parts)


def build(model, device, *, fuse=True, base_dir="", flags=0, rules="dmlsim",
          executor="reference", fallback=True, nested=None):
    """The plan for one input signature: a ``Plan`` when every node lowers onto DML, else a
    ``PartitionedPlan``; with ``fallback`` False a CPU node is E_NOTIMPL naming it (ORT's
    ``session.disable_cpu_ep_fallback``)."""
    L = Lowering(model, device, RULES, ACTIVATIONS, fuse=fuse, base_dir=base_dir,
                 placement=Placement(rules)).lower()
    if not L.cpu and not L.deferred:
        return Plan(None, device, flags=flags, lowering=L)
    if not fallback and L.cpu:
        k = next(iter(L.cpu))
        node = L.model.graph.node[k]
        fail(dml.E_NOTIMPL, f"node {k} '{node.name}' ({node.op_type}) would run on the CPU and "
                            f"{FALLBACK_KEY} is set: {cpu_reason(L, k)}")
    return PartitionedPlan(L, device, fuse, base_dir, flags, executor, nested)


class Report(NamedTuple):
    """``session.placement()``: one Row per node, the steps and the copies between them."""

    rows: list
    steps: list        # (index, "DML" | "CPU", node count, inputs, outputs)
    transfers: Transfers | None

    @property
    def all_dml(self) -> bool:
        return not any(r.device == "CPU" for r in self.rows)

    def __str__(self):
        lines = ["node  name                          op                    where   why"]
        for r in self.rows:
            where = r.device if r.step is None else f"{r.device}:{r.step}"
            extra = f" (+ {r.fused})" if r.fused else ""
            lines.append(f"{r.index:<5} {r.name[:29]:<29} {r.op_type[:21]:<21} {where:<7} "
                         f"{r.reason}{extra}")
        for index, kind, count, ins, outs in self.steps:
            lines.append(f"step {index}: {kind}, {count} node(s); in: {', '.join(ins) or '-'}; "
                         f"out: {', '.join(outs) or '-'}")
        cpu = sum(r.device == "CPU" for r in self.rows)
        lines.append(f"{len(self.rows) - cpu} node(s) on DML or folded, {cpu} on the CPU, "
                     f"{sum(k == 'DML' for _, k, *_ in self.steps)} DML partition(s)")
        if self.transfers is not None:
            t = self.transfers
            lines.append(f"copies so far: {t.uploads} UPLOAD ({t.upload_bytes} bytes), "
                         f"{t.readbacks} READBACK ({t.readback_bytes} bytes)")
        return "\n".join(lines)


def cpu_reason(L, k) -> str:
    """Why node ``k`` runs on the CPU: ORT's DML EP's verdict first, then dmlsim's."""
    node = L.model.graph.node[k]
    why = L.cpu[k]
    prefix = f"node {k} '{node.name}' ({node.op_type}): "
    why = why[len(prefix):] if why.startswith(prefix) else why
    takes, ep_why, _ = ep_verdict(L, node)
    if not takes:
        return ep_why if why == ep_why or why.startswith("no lowering in dmlsim") else \
            f"{ep_why}; dmlsim: {why}"
    return f"ORT's DML EP takes it; dmlsim does not lower it: {why}"


def report(L, steps=None, transfers=None) -> Report:
    nodes = L.model.graph.node
    where = {k: s.index for s in (steps or []) for k, _ in s.nodes}
    fused_into = {k: p for p, k in L.fused.items()}
    rows = []
    for k, node in enumerate(nodes):
        label = f"{node.op_type} '{node.name}'"
        fused = ""
        if k in L.cpu:
            device, why = "CPU", cpu_reason(L, k)
        elif k in L.folded or node.op_type == "Constant":
            device, why = "folded", "all inputs constant: computed at plan time"
        else:
            device = "DML"
            takes, ep_why, _ = ep_verdict(L, node)
            why = "" if takes else f"ORT's DML EP would run it on the CPU: {ep_why}"
            if k in L.deferred:
                why = f"planned per run ({L.deferred[k]})" + (f"; {why}" if why else "")
            if k in fused_into:
                p = nodes[fused_into[k]]
                why = f"fused into {p.op_type} '{p.name}'" + (f"; {why}" if why else "")
            if k in L.fused:
                a = nodes[L.fused[k]]
                fused = f"{a.op_type} '{a.name}' as FusedActivation"
        step = where.get(k, 0 if device == "DML" and steps is None else None)
        rows.append(Row(k, node.name or label, node.op_type, device, step, why, fused))
    if steps is None:
        count = sum(r.device == "DML" for r in rows)
        step_rows = [(0, "DML", count, [n for n, _, _ in L.inputs],
                      [o.name for o in L.model.graph.output])] if count else []
    else:
        def runtime(names):  # constants travel inside each step's sub-model
            return [n for n in names if n not in L.values or L.values[n].const is None]
        step_rows = [(s.index, s.kind, len(s.nodes), runtime(s.inputs), s.outputs)
                     for s in steps]
    return Report(rows, step_rows, transfers)
