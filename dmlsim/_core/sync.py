"""The one lock of dmlsim's object model.

D3D12 devices, queues and fences are free-threaded, and so are DirectML devices; command lists
and allocators are used from one thread at a time, as in D3D12. dmlsim keeps one process-wide
re-entrant lock: every public entry point holds it (``dmlsim._api.com``), so queues, fences,
memory and the JAX arrays behind them change from one thread at a time. A thread that blocks
(a fence wait, WaitForSingleObject) waits on ``CONDITION``, which releases the lock, however
deeply held, until a CPU-side Signal or completed work wakes it.
"""
from __future__ import annotations

import threading

LOCK = threading.RLock()
CONDITION = threading.Condition(LOCK)


def pause(seconds: float) -> None:
    """Wait up to ``seconds`` with the lock released (the caller holds it)."""
    with CONDITION:
        CONDITION.wait(seconds)


def wake() -> None:
    """Wake the threads waiting in ``pause`` (something they may wait for happened)."""
    with CONDITION:
        CONDITION.notify_all()


def others_running() -> bool:
    """Whether another (non-daemon) Python thread could still signal a fence from the CPU;
    daemon threads (progress-bar monitors, pools) are taken as helpers that do not."""
    me = threading.current_thread()
    return any(t is not me and t.is_alive() and not t.daemon for t in threading.enumerate())
