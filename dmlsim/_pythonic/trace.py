"""``dmlsim.trace()``: a record of queue activity, exportable as Chrome/Perfetto JSON.

While a trace is active, every ExecuteCommandLists, Signal and Wait a queue processes becomes
one event: the queue, the command lists (and their records), the fence and value, and the
host wall-clock span (``time.perf_counter_ns``) of the queue's CPU-side processing. JAX runs
kernels asynchronously, so these are *submission* spans, not kernel durations; a Wait appears
when the queue passes it, and a Signal that releases another queue's Wait spans the work that
queue then runs. For executions, ``complete_ns`` is when the host first learned the
work was done (a fence poll or wait that found it, or later work of its queue, complete),
if that happened inside the trace.

Cost when no trace is active: one ``is not None`` test per queue item (``config.settings.trace``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from .._core.config import settings
from .reprs import _box, _table, record_text

COLORS = {"execute": "tab:blue", "signal": "tab:green", "wait": "tab:orange"}


@dataclass
class TraceEvent:
    kind: str                 # "execute", "signal" or "wait"
    queue: str                # the queue's name (SetName), or "queue N" in order of appearance
    name: str                 # e.g. "ExecuteCommandLists 'a'", "Signal 'f' 1"
    start_ns: int
    end_ns: int = 0
    args: dict = field(default_factory=dict)
    complete_ns: int | None = None  # executions: the host observed the work complete


class Trace:
    """Use as ``with dmlsim.trace() as t: ...``; then ``t.events``, ``t.to_chrome(path)``,
    ``t.plot()``."""

    def __init__(self):
        self.events: list[TraceEvent] = []
        self.queues: dict = {}  # core queue -> label, in order of first appearance
        self.t0 = time.perf_counter_ns()
        self.active = False

    def __enter__(self):
        if settings.trace is not None:
            raise RuntimeError("dmlsim.trace: another trace is already recording")
        if not self.events:  # re-entering a trace keeps one time origin
            self.t0 = time.perf_counter_ns()
        self.active = True
        settings.trace = self._hook
        return self

    def __exit__(self, *exc):
        self.active = False
        settings.trace = None
        return False

    def _hook(self, queue, item, run):
        kind = type(item).__name__.lower()  # "execute", "signal" or "wait"
        label = self.queues.get(queue)
        if label is None:
            label = queue.name or f"queue {len(self.queues)}"
            if label in self.queues.values():  # two queues with one name: two rows
                label += f" #{len(self.queues)}"
            self.queues[queue] = label
        if kind == "execute":
            names = [cl.name or f"list {i}" for i, cl in enumerate(item.lists)]
            name = "ExecuteCommandLists " + ", ".join(f"'{n}'" for n in names)
            args = {"lists": names, "records": [[record_text(r) for r in cl.records]
                                                for cl in item.lists]}
        else:
            fence = item.fence.name or "fence"
            name = f"{kind.capitalize()} '{fence}' {item.value}"
            args = {"fence": fence, "value": item.value}
        ev = TraceEvent(kind, label, name, time.perf_counter_ns(), args=args)
        self.events.append(ev)
        try:
            run(item)
        finally:
            ev.end_ns = time.perf_counter_ns()
        if kind == "execute" and queue.open_marker is not None:
            self._watch(queue.open_marker, ev)

    def _watch(self, marker, ev):
        finish = marker._finish  # called once, when the host finds the work complete

        def observed():
            if self.active and ev.complete_ns is None:
                now = time.perf_counter_ns()
                for e in self.events:  # a queue completes in order: earlier work is done too
                    if e.queue == ev.queue and e.kind == "execute" and e.complete_ns is None \
                            and e.start_ns <= ev.start_ns:
                        e.complete_ns = now
            finish()
        marker._finish = observed

    def _us(self, ns) -> float:
        return (ns - self.t0) / 1000

    def to_chrome(self, path=None) -> dict:
        """Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one "X" event per item,
        one thread per queue; written to ``path`` when given."""
        tids = {label: i + 1 for i, label in enumerate(self.queues.values())}
        out = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                "args": {"name": "dmlsim queues (host submission spans)"}}]
        out += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": label}}
                for label, tid in tids.items()]
        for e in self.events:
            args = dict(e.args, kind=e.kind)
            if e.complete_ns is not None:
                args["observed_complete_us"] = self._us(e.complete_ns)
            out.append({"name": e.name, "cat": e.kind, "ph": "X", "ts": self._us(e.start_ns),
                        "dur": (e.end_ns - e.start_ns) / 1000, "pid": 1, "tid": tids[e.queue],
                        "args": args})
        doc = {"traceEvents": out, "displayTimeUnit": "ms"}
        if path is not None:
            with open(path, "w") as f:
                json.dump(doc, f)
        return doc

    def plot(self, ax=None):
        """A matplotlib timeline: one row per queue, one bar per item (a tick where the host
        observed an execution complete). Returns the Axes."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
        own = ax is None
        if own:
            _, ax = plt.subplots(figsize=(9, 1 + 0.6 * max(1, len(self.queues))))
        rows = {label: i for i, label in enumerate(self.queues.values())}
        ms = lambda ns: self._us(ns) / 1000  # noqa: E731 -- the axis is in milliseconds
        span = max([ms(e.end_ns) for e in self.events] or [1])
        for e in self.events:
            y, x, w = rows[e.queue], ms(e.start_ns), (e.end_ns - e.start_ns) / 1e6
            ax.broken_barh([(x, w)], (y - 0.35, 0.7), facecolors=COLORS[e.kind],
                           edgecolors="white", linewidth=0.5)
            if w > 0.15 * span:  # room for a label
                ax.text(x + w / 2, y, e.name, ha="center", va="center", fontsize="small",
                        clip_on=True)
            if e.complete_ns is not None:
                ax.plot([ms(e.complete_ns)], [y], marker="|", markersize=18, color="k")
        ax.set_yticks(range(len(rows)), list(rows))
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel("host time since the trace started (ms)")
        ax.legend(handles=[Patch(color=c, label=k) for k, c in COLORS.items()],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
        if own:
            ax.figure.tight_layout()
        return ax

    def __repr__(self):
        return f"<dmlsim.Trace {len(self.events)} events on {len(self.queues)} queues>"

    def _repr_html_(self):
        rows = [(e.queue, e.name, f"{self._us(e.start_ns):.1f}",
                 f"{(e.end_ns - e.start_ns) / 1000:.1f}",
                 "" if e.complete_ns is None else f"{self._us(e.complete_ns):.1f}")
                for e in self.events]
        return _box("dmlsim.Trace", f"{len(self.events)} events",
                    _table(("queue", "item", "start µs", "host µs", "observed complete µs"),
                           rows))


def trace() -> Trace:
    """Record queue activity while used as a context manager (see the module docstring)."""
    return Trace()
