"""Binding layouts: what a dispatchable's binding table holds, described once.

Every dispatchable (compiled operator, operator initializer, compiled graph) has a
:class:`BindingLayout`: its input and output slots (label, field, tensor, whether a binding is
required, optional or forbidden, whether the tensor is OWNED_BY_DML, the bytes and alignment a
binding needs), the groups a BUFFER_ARRAY binding covers (initializers), the temporary and
persistent sizes and whether inputs may alias outputs. Binding checks, hazard checks, the
debug layer, the notebook reprs and the list compiler read only this.

Descriptor order (docs/binding.md): the input slots, the output slots, the temporary
resource, then (for dispatchables that have one) the persistent resource.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._schema.d3d12_enums import D3D12_HEAP_TYPE
from .tensor import TensorSpec

DEFAULT = D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_DEFAULT
UPLOAD = D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_UPLOAD
REQUIRED, OPTIONAL, FORBIDDEN = "required", "optional", "forbidden"
ALIGN = 256  # DML_PERSISTENT_BUFFER_ALIGNMENT == DML_TEMPORARY_BUFFER_ALIGNMENT


def align_up(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class Slot:
    """One binding slot. ``label`` is how binding messages name it ("input 1 (BTensor)");
    ``debug_label`` how the debug layer's execution messages do. ``rule``: REQUIRED,
    OPTIONAL or FORBIDDEN (then ``why`` says why it must be bound as NONE)."""

    label: str
    field: str = ""
    index: int | None = None
    spec: TensorSpec | None = None
    rule: str = REQUIRED
    why: str = ""
    owned: bool = False
    need: int = 0
    align: int = 16
    heaps: tuple = (DEFAULT,)
    uav: bool = True
    debug_label: str = ""
    persistent_at: int | None = None  # an OWNED_BY_DML input: its offset in the persistent
    stored: TensorSpec | None = None   # resource, and how it is stored there
    writes: tuple = ()                 # an initializer's output: (offset, bytes) it writes

    @property
    def name(self) -> str:
        """The field, with the array element: 'InputTensors[1]'."""
        return self.field if self.index is None else f"{self.field}[{self.index}]"


@dataclass(frozen=True)
class Group:
    """Consecutive input slots bound by one DML_BUFFER_ARRAY_BINDING (one operator of an
    initializer): ``inputs[start:stop]``; ``needed`` when some slot must be bound."""

    label: str       # "operator 0 (DML_OPERATOR_GEMM)"
    owner: str       # "DML_OPERATOR_GEMM"
    start: int
    stop: int
    needed: bool


@dataclass(frozen=True)
class BindingLayout:
    kind: str                 # "compiled operator", "operator initializer", "compiled graph"
    name: str                 # how messages name the dispatchable ("DML_OPERATOR_ADD")
    inputs: tuple = ()
    outputs: tuple = ()
    groups: tuple | None = None  # None: one DML_BUFFER_BINDING per input slot
    temporary_size: int = 0
    persistent_size: int = 0
    has_persistent: bool = True  # a persistent-resource binding (initializers have none)
    in_place: bool = False
    copies_inputs: bool = False  # initializers: inputs are copied into the outputs

    @property
    def descriptor_count(self) -> int:
        return len(self.inputs) + len(self.outputs) + 1 + int(self.has_persistent)

    @property
    def temporary_index(self) -> int:
        return len(self.inputs) + len(self.outputs)

    @property
    def persistent_index(self) -> int | None:
        return self.temporary_index + 1 if self.has_persistent else None

    def descriptor_labels(self) -> list:
        """A debug label per descriptor, in descriptor order."""
        labels = [s.debug_label or s.label for s in self.inputs + self.outputs]
        labels.append("the temporary resource")
        if self.has_persistent:
            labels.append("the persistent resource")
        return labels

    def split(self, descs):
        """(inputs, outputs, temporary, persistent) of a descriptor sequence."""
        n_in, n_out = len(self.inputs), len(self.outputs)
        descs = list(descs) + [None] * max(0, self.descriptor_count - len(descs))
        return (descs[:n_in], descs[n_in:n_in + n_out], descs[n_in + n_out],
                descs[n_in + n_out + 1] if self.has_persistent else None)


def operator_layout(spec, schema: dict, stored: dict, persistent_size: int,
                    temporary_size: int) -> BindingLayout:
    """The layout of a compiled operator of ``spec`` (an OpSpec). ``stored``: input slot index
    -> (offset in the persistent resource, stored TensorSpec) of each OWNED_BY_DML input."""
    optional = {f["name"] for f in schema["fields"] if f.get("optional")}
    inputs = []
    for i, (fname, idx, t) in enumerate(spec.slots("input")):
        label = f"input {i} ({fname if idx is None else f'{fname}[{idx}]'})"
        if t is None:
            inputs.append(Slot(label, fname, idx, None, FORBIDDEN,
                               "the operator was created without this optional tensor, so it "
                               "must be bound as DML_BINDING_TYPE_NONE"))
        elif t.owned_by_dml:
            inputs.append(Slot(label, fname, idx, t, FORBIDDEN,
                               "the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so it is bound only "
                               "to the operator initializer; bind NONE for execution", owned=True,
                               need=t.total_bytes, align=t.offset_alignment,
                               persistent_at=stored[i][0], stored=stored[i][1]))
        else:
            inputs.append(Slot(label, fname, idx, t, REQUIRED, need=t.total_bytes,
                               align=t.offset_alignment))
    outputs = []
    for i, (fname, idx, t) in enumerate(spec.slots("output")):
        label = f"output {i} ({fname if idx is None else f'{fname}[{idx}]'})"
        if t is None:
            outputs.append(Slot(label, fname, idx, None, FORBIDDEN,
                                "the operator was created without this optional tensor; bind "
                                "DML_BINDING_TYPE_NONE"))
        else:
            outputs.append(Slot(label, fname, idx, t, OPTIONAL if fname in optional else REQUIRED,
                                need=t.total_bytes, align=t.offset_alignment))
    return BindingLayout("compiled operator", spec.name, tuple(inputs), tuple(outputs),
                         temporary_size=temporary_size, persistent_size=persistent_size,
                         in_place=bool(schema.get("in_place")))


def initializer_layout(layouts) -> BindingLayout:
    """An operator initializer's layout over the layouts of the dispatchables it initializes:
    one BUFFER_ARRAY group per dispatchable (its OWNED_BY_DML inputs required, the others
    unbound) and one persistent-resource output each."""
    inputs, groups, outputs = [], [], []
    for k, lay in enumerate(layouts):
        start = len(inputs)
        for i, s in enumerate(lay.inputs):
            label = f"input {k}, array element {i} ({s.field})"
            debug = f"input {k}, array element {i} ({s.field} of {lay.name})"
            if s.owned:
                inputs.append(Slot(label, s.field, s.index, s.spec, REQUIRED, owned=True,
                                   need=s.need, align=s.align, heaps=(DEFAULT, UPLOAD), uav=False,
                                   debug_label=debug, persistent_at=s.persistent_at,
                                   stored=s.stored))
            else:
                inputs.append(Slot(label, s.field, s.index, s.spec, FORBIDDEN,
                                   "only OWNED_BY_DML tensors are bound to an operator "
                                   "initializer; this one must be left unbound",
                                   debug_label=debug))
        groups.append(Group(f"operator {k} ({lay.name})", lay.name, start, len(inputs),
                            any(s.owned for s in lay.inputs)))
        outputs.append(Slot(f"output {k} (persistent resource of {lay.name})",
                            rule=REQUIRED if lay.persistent_size else OPTIONAL,
                            need=lay.persistent_size, align=ALIGN,
                            writes=tuple((s.persistent_at, s.stored.total_bytes)
                                         for s in lay.inputs if s.owned)))
    return BindingLayout("operator initializer", "the operator initializer", tuple(inputs),
                         tuple(outputs), tuple(groups), has_persistent=False, copies_inputs=True)
