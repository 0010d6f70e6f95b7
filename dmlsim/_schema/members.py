"""Short local names for enum members, taken from the schema's enums (never retyped numbers)."""
from __future__ import annotations

import enum
import os

from . import d3d12_enums, enums_generated


def members(enum_cls: type[enum.Enum] | str, names: str) -> tuple:
    """The values (plain ints) of the members of ``enum_cls`` (an enum, or the name of one of
    the schema's enums) whose
    names end in each space-separated name after the enum's common prefix:
    ``members("DML_AXIS_DIRECTION", "INCREASING DECREASING")``. A name that is not there
    raises KeyError at import."""
    cls: type[enum.Enum] = enum_cls if not isinstance(enum_cls, str) else \
        getattr(enums_generated, enum_cls, None) or getattr(d3d12_enums, enum_cls)
    prefix = os.path.commonprefix([m.name for m in cls])
    prefix = prefix[:prefix.rfind("_") + 1]
    return tuple(int(cls[prefix + n].value) for n in names.split())
