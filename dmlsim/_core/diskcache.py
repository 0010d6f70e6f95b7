"""Compiled programs kept on disk by their structure, so that the next process skips tracing.

JAX's persistent compilation cache (config.enable_compilation_cache) is keyed by the lowered
module, so a process must still trace and lower every program before it can find one there: for
an 860-node ONNX model that is seconds of Python before the cache answers. A plan's key
(steps.Plan.key) already names everything its program depends on -- the steps' structure,
memories' lengths, what is written and grouped -- and the in-process PlanCache trusts it. This
store trusts it across processes too: the SHA-256 of the key's text, the arguments' shapes and
types, the device, JAX's and jaxlib's versions, the x64 setting and the text of dmlsim's own
sources names a file holding the serialized executable
(``jax.experimental.serialize_executable``). A program found there is loaded instead of
traced, lowered and compiled.

A key is kept only when its text names nothing by address (a ``<... at 0x...>`` repr could
name another object in another process), and only programs whose compilation took
``MIN_SECONDS`` or more are written (small ones recompile about as fast as they load). The
directory is bounded: past ``MAX_BYTES`` the least recently used files leave first. A file that
cannot be read or loaded is compiled again and replaced; a directory that cannot be written
is left alone: the store never fails a program.
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
import time
from pathlib import Path

import jax
import jaxlib
from jax._src import config as jax_config
from jax.experimental.serialize_executable import deserialize_and_load, serialize

log = logging.getLogger("dmlsim")

MIN_SECONDS = 0.05   # programs compiling faster than this are not written
MAX_BYTES = 1 << 30  # the directory's bound; least recently used files leave first
SUFFIX = ".dmlprog"


def _sources_digest() -> str:
    """The text of dmlsim's sources: a changed kernel is another program."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


class ProgramStore:
    """One directory of serialized executables, named by digest."""

    def __init__(self, directory: str):
        self.directory = Path(directory)
        self._salt = None  # versions and sources, computed at the first use
        self.counts = {"loaded": 0, "written": 0}

    def salt(self) -> str:
        if self._salt is None:
            self._salt = "|".join((jax.__version__, jaxlib.__version__,
                                   str(jax.config.jax_enable_x64), _sources_digest()))
        return self._salt

    def digest(self, key, args) -> tuple | None:
        """(file name, device) of ``key``'s program for ``args``, or None when it cannot be
        kept."""
        text = repr(key)
        if " at 0x" in text:
            return None
        device = None
        shapes = []
        for a in args:
            if device is None and isinstance(a, jax.Array):
                device = next(iter(a.devices()))
            shapes.append((tuple(getattr(a, "shape", ())), str(getattr(a, "dtype", type(a)))))
        if device is None:
            return None
        h = hashlib.sha256()
        for part in (self.salt(), f"{device.platform}:{device.device_kind}:{device.id}",
                     repr(shapes), text):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest(), device

    def load(self, name: str, device):
        path = self.directory / (name + SUFFIX)
        try:
            blob = path.read_bytes()
        except OSError:
            return None
        try:
            serialized, in_tree, out_tree = pickle.loads(blob)
            compiled = deserialize_and_load(serialized, in_tree, out_tree,
                                            backend=device.client, execution_devices=[device])
        except Exception as e:  # written by another version, or damaged: compile it again
            log.info("dmlsim: program %s could not be loaded (%s); compiling it", path, e)
            return None
        try:
            os.utime(path)  # recently used
        except OSError:
            pass
        self.counts["loaded"] += 1
        return compiled

    def save(self, name: str, compiled) -> None:
        try:
            blob = pickle.dumps(serialize(compiled))
        except Exception:  # a program JAX cannot serialize (closed-over constants): not kept
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, self.directory / (name + SUFFIX))
        except OSError as e:
            log.info("dmlsim: could not keep a program in %s (%s)", self.directory, e)
            return
        self.counts["written"] += 1
        self.trim()

    def trim(self, limit: int = MAX_BYTES) -> None:
        """Remove the least recently used files until the directory holds at most ``limit``
        bytes."""
        try:
            files = [(p.stat().st_mtime, p.stat().st_size, p)
                     for p in self.directory.glob("*" + SUFFIX)]
        except OSError:
            return
        total = sum(size for _, size, _ in files)
        for _, size, p in sorted(files, key=lambda f: f[0]):
            if total <= limit:
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= size


def _compile_fresh(lowered):
    """``lowered`` compiled here, not loaded from JAX's persistent cache: an executable JAX
    loaded from its cache serializes into one that cannot run (jaxlib 0.10: loading it, XLA's
    CPU runtime fails with "Function transpose_copy_fusion.2 not found" at the first run)."""
    state = getattr(jax_config, "enable_compilation_cache", None)
    if state is None:  # pragma: no cover - a JAX without that setting has no such cache
        return lowered.compile()
    with state(False):
        return lowered.compile()


class Persisted:
    """A jitted program that, at its first call, is loaded from ``store`` by ``key`` or else
    lowered, compiled and (when that took ``MIN_SECONDS``) written there; later calls run the
    executable. Arguments of other types than the first call's run the jitted function."""

    __slots__ = ("fn", "key", "store", "call")

    def __init__(self, fn, key, store: ProgramStore):
        self.fn, self.key, self.store = fn, key, store
        self.call = self._first

    def __call__(self, *args):
        call = self.call
        try:
            return call(*args)
        except TypeError:  # other argument types than the executable's: the jitted function
            if call is self.fn:
                raise
            self.call = self.fn
            return self.fn(*args)

    def _first(self, *args):
        store = self.store
        found = store.digest(self.key, args)
        if found is None:
            self.call = self.fn
            return self.fn(*args)
        name, device = found
        compiled = store.load(name, device)
        if compiled is None:
            start = time.perf_counter()
            compiled = _compile_fresh(self.fn.lower(*args))
            if time.perf_counter() - start >= MIN_SECONDS:
                store.save(name, compiled)
        self.call = compiled
        return compiled(*args)
