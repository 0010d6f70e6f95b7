"""Where debug messages go: the ID3D12InfoQueue store and the ``dmlsim.debug`` logger.

With the D3D12 debug layer on, a message passes the top storage filter or is dropped; a
stored message is kept (oldest dropped beyond the count limit), printed in the D3D12 format
``D3D12 ERROR: <text> [ EXECUTION ERROR #538: INVALID_SUBRESOURCE_STATE ]`` on the
``dmlsim.debug`` logger (unless ID3D12InfoQueue::SetMuteDebugOutput), handed to the registered
message callbacks, and finally, if its severity, category or ID is set to break on, raised as
:class:`D3D12DebugBreak` from the call that produced it (where Windows would stop in the
debugger). Without the D3D12 debug layer (DirectML's flag alone), messages are only logged, in
DirectML's ``[DIRECTML ERROR]: <text>`` format.
"""
from __future__ import annotations

import logging
from typing import NamedTuple

from . import catalog as C

log = logging.getLogger("dmlsim.debug")
_LEVELS = {C.CORRUPTION: logging.CRITICAL, C.ERROR: logging.ERROR, C.WARNING: logging.WARNING,
           C.INFO: logging.INFO, C.MESSAGE: logging.DEBUG}
DEFAULT_MESSAGE_COUNT_LIMIT = 1024


class Message(NamedTuple):
    category: int
    severity: int
    id: int
    description: str


def severity_name(sev: int) -> str:
    return C.SEVERITIES[sev] if 0 <= sev < len(C.SEVERITIES) else str(sev)


def format_line(m: Message) -> str:
    """The D3D12 debug-output line of ``m``."""
    sev = severity_name(m.severity)
    cat = "UNKNOWN" if m.category == C.APPLICATION_DEFINED else (
        C.CATEGORIES[m.category] if 0 <= m.category < len(C.CATEGORIES) else str(m.category))
    return f"D3D12 {sev}: {m.description} [ {cat} {sev} #{m.id}: {C.name_of(m.id)} ]"


class D3D12DebugBreak(Exception):
    """Raised where a message the info queue breaks on (SetBreakOnSeverity / Category / ID)
    is produced; ``.message`` is the D3D12_MESSAGE-like tuple."""

    passes_guard = True  # a debugger break, not an argument error: it reaches the caller

    def __init__(self, message: Message):
        super().__init__(format_line(message))
        self.message = message


class Filter:
    """One D3D12_INFO_QUEUE_FILTER: allow and deny lists of categories, severities, IDs."""

    def __init__(self, allow=((), (), ()), deny=((), (), ())):
        self.allow = tuple(set(int(x) for x in xs) for xs in allow)
        self.deny = tuple(set(int(x) for x in xs) for xs in deny)

    def copy(self) -> "Filter":
        return Filter(self.allow, self.deny)

    def add(self, other: "Filter") -> None:
        for mine, theirs in zip(self.allow + self.deny, other.allow + other.deny):
            mine |= theirs

    def passes(self, m: Message) -> bool:
        keys = (m.category, m.severity, m.id)
        if any(k in d for k, d in zip(keys, self.deny)):
            return False
        return all(not a or k in a for k, a in zip(keys, self.allow))


class FilterStack:
    def __init__(self):
        self.stack = [Filter()]

    @property
    def top(self) -> Filter:
        return self.stack[-1]

    def push(self, f: Filter) -> None:
        self.stack.append(f)

    def pop(self) -> None:
        if len(self.stack) > 1:
            self.stack.pop()
        else:
            self.stack[0] = Filter()


class MessageStore:
    """The state behind one device's ID3D12InfoQueue (core values: plain ints)."""

    def __init__(self):
        self.messages: list = []
        self.limit = DEFAULT_MESSAGE_COUNT_LIMIT
        self.allowed = self.denied = self.discarded = 0
        self.storage = FilterStack()
        self.retrieval = FilterStack()
        self.break_on = ({}, {}, {})  # category, severity, id -> bool
        self.mute_output = False
        self.callbacks: dict = {}     # cookie -> (fn(Message), ignore_filters)
        self.next_cookie = 1

    def add(self, m: Message) -> None:
        stored = self.storage.top.passes(m)
        if stored:
            self.allowed += 1
            self.messages.append(m)
            if 0 <= self.limit < len(self.messages):
                drop = len(self.messages) - self.limit
                del self.messages[:drop]
                self.discarded += drop
            if not self.mute_output:
                log.log(_LEVELS.get(m.severity, logging.WARNING), "%s", format_line(m))
        else:
            self.denied += 1
        for fn, ignore_filters in list(self.callbacks.values()):
            if stored or ignore_filters:
                fn(m)
        if stored and any(table.get(k) for table, k in zip(
                self.break_on, (m.category, m.severity, m.id))):
            raise D3D12DebugBreak(m)

    def retrievable(self) -> list:
        top = self.retrieval.top
        return [m for m in self.messages if top.passes(m)]

    def clear(self) -> None:
        self.messages.clear()


def log_directml(m: Message) -> None:
    """DirectML's own output when the D3D12 debug layer (and so the info queue) is off."""
    log.log(_LEVELS.get(m.severity, logging.WARNING), "[DIRECTML %s]: %s",
            severity_name(m.severity), m.description)
