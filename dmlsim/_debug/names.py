"""How debug messages name things: objects by their SetName name, states by their D3D12
names, byte ranges as [begin, end); plus the interval sets the checks keep per buffer."""
from __future__ import annotations

_STATE_BITS = ((0x1, "VERTEX_AND_CONSTANT_BUFFER"), (0x2, "INDEX_BUFFER"), (0x4, "RENDER_TARGET"),
               (0x8, "UNORDERED_ACCESS"), (0x10, "DEPTH_WRITE"), (0x20, "DEPTH_READ"),
               (0x40, "NON_PIXEL_SHADER_RESOURCE"), (0x80, "PIXEL_SHADER_RESOURCE"),
               (0x100, "STREAM_OUT"), (0x200, "INDIRECT_ARGUMENT"), (0x400, "COPY_DEST"),
               (0x800, "COPY_SOURCE"), (0x1000, "RESOLVE_DEST"), (0x2000, "RESOLVE_SOURCE"))


def state(value: int) -> str:
    """'D3D12_RESOURCE_STATE_COPY_DEST (0x400)'."""
    value = int(value)
    if value == 0:
        names = ["COMMON"]
    elif value == 0xAC3:
        names = ["GENERIC_READ"]
    else:
        names = [n for bit, n in _STATE_BITS if value & bit] or [f"0x{value:X}"]
    return " | ".join("D3D12_RESOURCE_STATE_" + n for n in names) + f" (0x{value:X})"


def obj(o, kind: str) -> str:
    """"command list 'frame'" or "command list @0x7F..." for unnamed objects."""
    name = getattr(o, "name", "")
    return f"{kind} '{name}'" if name else f"unnamed {kind} @0x{id(o):X}"


def buf(b) -> str:
    return b.label()


def span(b, lo, hi) -> str:
    return f"{b.label()} bytes [{lo}, {hi})"


def heap(h) -> str:
    return obj(h, "descriptor heap")


def dispatchable(d) -> str:
    """'DML_OPERATOR_ELEMENT_WISE_ADD (compiled operator 'add')' or 'operator initializer ...'."""
    name = f"'{d.name}'" if d.name else f"@0x{id(d):X}"
    lay = d.layout
    if lay.groups is not None:
        ops = ", ".join(o.layout.name for o in d.initializes) or "no operators"
        return f"{lay.kind} {name} (of {ops})"
    return f"{lay.name} ({lay.kind} {name})"


def table(t) -> str:
    return obj(t, "binding table")


class Ranges:
    """A set of bytes as sorted, disjoint [lo, hi) intervals."""

    __slots__ = ("iv",)

    def __init__(self):
        self.iv: list = []

    def add(self, lo: int, hi: int) -> None:
        if lo >= hi:
            return
        keep = []
        for a, b in self.iv:
            if b < lo or a > hi:
                keep.append((a, b))
            else:
                lo, hi = min(a, lo), max(b, hi)
        keep.append((lo, hi))
        keep.sort()
        self.iv = keep

    def gaps(self, lo: int, hi: int) -> list:
        """The parts of [lo, hi) not in the set."""
        out, cur = [], lo
        for a, b in self.iv:
            if b <= cur:
                continue
            if a >= hi:
                break
            if a > cur:
                out.append((cur, a))
            cur = max(cur, b)
            if cur >= hi:
                break
        if cur < hi:
            out.append((cur, hi))
        return out


def join_ranges(parts) -> str:
    return ", ".join(f"[{a}, {b})" for a, b in parts)
