"""The device's one cache of compiled programs (steps.py builds what goes in it).

Owned by the D3D12 device (``resources.Device.plans``), so nothing outlives a device the user
dropped; bounded (least recently used programs leave first), so a long session fed changing
shapes and sizes stays within a fixed number of programs; one key scheme: a plan's ``key``
(its steps' structure, its memories' lengths, what it writes and groups), or a tuple starting
with a string for helper programs ("gather", ...).
"""
from __future__ import annotations

from collections import OrderedDict

import jax
import numpy as np

from . import config
from .diskcache import Persisted

CAPACITY = 48  # programs per device (about 1.4 MiB each on the CPU: RSS stays bounded)


class PlanCache:
    """Programs by key, the whole-list structures seen once (they compile at their second
    execution), the device-resident zero of sealed programs, and counts tests read:
    ``compiled`` (executions that ran as one whole-list program), ``again`` (of those, ones
    that reused the list's last plan unchanged), ``traced`` (programs jitted)."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self.programs: OrderedDict = OrderedDict()
        self.seen: OrderedDict = OrderedDict()
        self.zeros: dict = {}
        self.counts = {"compiled": 0, "again": 0, "traced": 0}

    def __len__(self) -> int:
        return len(self.programs)

    def get(self, key):
        fn = self.programs.get(key)
        if fn is not None:
            self.programs.move_to_end(key)
        return fn

    def program(self, key, make):
        """The program of ``key``, made by ``make()`` (and kept) if there is none."""
        fn = self.get(key)
        if fn is None:
            self.counts["traced"] += 1
            fn = make()
            store = config.settings.programs
            if store is not None:  # the next process loads it by its key
                fn = Persisted(fn, key, store)
            self.programs[key] = fn
            if len(self.programs) > self.capacity:
                self.programs.popitem(last=False)
        return fn

    def first_time(self, key) -> bool:
        """Whether ``key`` is seen here for the first time (noting it)."""
        if key in self.seen or key in self.programs:
            return False
        self.seen[key] = None
        if len(self.seen) > 8 * self.capacity:
            self.seen.popitem(last=False)
        return True

    def zero(self, device):
        """A uint32 zero resident on ``device``: the opaque operand of views.sealed."""
        z = self.zeros.get(device)
        if z is None:
            z = self.zeros[device] = jax.device_put(np.zeros((), np.uint32), device)
        return z

    def clear(self) -> None:
        self.programs.clear()
        self.seen.clear()
        self.zeros.clear()
