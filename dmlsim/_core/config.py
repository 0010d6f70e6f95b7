"""Process-wide settings: emulated feature level, strict mode, JAX's 64-bit mode, whole-list
compilation, the active trace. ``settings`` is the one mutable object of the core at module
level (as ``jax.config``): everything else a device owns.

64-bit types (INT64, UINT64, FLOAT64) must be exact, and JAX truncates them to 32 bits unless
``jax_enable_x64`` is on. dmlsim therefore turns ``jax_enable_x64`` on when it is imported and
says so (a log record on the ``dmlsim`` logger, the README and ``dmlsim.info``). Setting
``DMLSIM_X64=0`` before import leaves JAX alone; 64-bit tensor types are then refused at
CreateOperator with E_INVALIDARG, naming the reason, rather than computed wrongly.
"""
from __future__ import annotations

import logging
import os

import jax

from .diskcache import ProgramStore
from .hresult import E_INVALIDARG, fail

log = logging.getLogger("dmlsim")

# The highest feature level dmlsim emulates (DML_FEATURE_LEVEL_6_4).
MAX_FEATURE_LEVEL = 0x6400


def _parse_level(text: str) -> int:
    t = text.strip().upper().replace("DML_FEATURE_LEVEL_", "")
    if t.startswith("0X"):
        return int(t, 16)
    major, _, minor = t.replace(".", "_").partition("_")
    return (int(major) << 12) | (int(minor or 0) << 8)


class _Settings:
    def __init__(self):
        self.strict = os.environ.get("DMLSIM_STRICT", "0") not in ("", "0", "false", "False")
        env_fl = os.environ.get("DMLSIM_FEATURE_LEVEL")
        self.feature_level = _parse_level(env_fl) if env_fl else MAX_FEATURE_LEVEL
        self.x64 = os.environ.get("DMLSIM_X64", "1") not in ("0", "false", "False")
        self.wait_timeout = _seconds(os.environ.get("DMLSIM_WAIT_TIMEOUT", ""), 60.0)
        # DMLSIM_LIST_COMPILE: "0" runs every list record by record; "first" compiles a list's
        # structure the first time it executes; the default ("1") the second time it executes
        # (from any list), so that work executed once costs no extra XLA compile.
        mode = os.environ.get("DMLSIM_LIST_COMPILE", "1")
        self.list_compile = "0" if mode in ("0", "false", "False") else \
            "first" if mode == "first" else "1"
        # DMLSIM_TYPED_WEIGHTS=0: whole-list programs read OWNED_BY_DML tensors out of the
        # persistent resource's storage at every execution, as one-record programs do, instead
        # of taking typed copies made once (typed_views.py; the default: more device memory, no
        # per-run copies of the weights).
        self.typed_weights = os.environ.get("DMLSIM_TYPED_WEIGHTS", "1") not in (
            "0", "false", "False")
        # dmlsim.trace() sets this to hook(queue, item, run) while it records; a queue checks
        # it once per item, so tracing off costs one `is not None` test per item.
        self.trace = None
        # diskcache.ProgramStore of compiled programs by structure (enable_compilation_cache),
        # or None
        self.programs = None


def _seconds(text: str, default: float) -> float:
    try:
        value = float(text) if text.strip() else default
    except ValueError:
        value = default
    return value if value > 0 else default


settings = _Settings()


def set_strict(on: bool = True) -> None:
    """Make misuse in void methods (BindInputs, RecordDispatch, ...) raise at the call site
    instead of removing the device, like ``DMLSIM_STRICT=1``."""
    settings.strict = bool(on)


def set_wait_timeout(seconds) -> None:
    """How long an INFINITE fence wait that nothing submitted can satisfy may wait while other
    threads run, with no CPU Signal of that fence, before it fails with E_FAIL (default 60 s;
    ``DMLSIM_WAIT_TIMEOUT`` in the environment)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        fail(E_INVALIDARG, f"set_wait_timeout: {seconds!r} is not a positive number of seconds")
    settings.wait_timeout = float(seconds)


def set_feature_level(level) -> None:
    """Set the feature level that devices created from now on emulate (default 6_4).

    Accepts a DML_FEATURE_LEVEL value, or a string like ``"5_1"``; same as
    ``DMLSIM_FEATURE_LEVEL=5_1`` in the environment.
    """
    value = None
    if not isinstance(level, bool) and (isinstance(level, (str, int)) or
                                        hasattr(level, "__index__")):
        try:
            value = _parse_level(level) if isinstance(level, str) else level.__index__()
        except (TypeError, ValueError):
            value = None
    if value is None:
        fail(E_INVALIDARG, f"set_feature_level: {level!r} is not a DML_FEATURE_LEVEL (a value or "
                           "a string such as '5_1')")
    if value > MAX_FEATURE_LEVEL or value < 0x1000:
        fail(E_INVALIDARG, f"set_feature_level: 0x{value:04X} is outside "
                           f"0x1000..0x{MAX_FEATURE_LEVEL:04X}")
    settings.feature_level = value


def fl_name(value: int) -> str:
    return f"DML_FEATURE_LEVEL_{value >> 12}_{(value >> 8) & 0xF}"


def compilation_cache_dir() -> str | None:
    """Where JAX's persistent compilation cache lives for dmlsim: ``DMLSIM_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/dmlsim/jax`` (``~/.cache/dmlsim/jax``); None when
    ``DMLSIM_COMPILATION_CACHE=0``."""
    if os.environ.get("DMLSIM_COMPILATION_CACHE", "1") in ("0", "false", "False"):
        return None
    explicit = os.environ.get("DMLSIM_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dmlsim", "jax")


def enable_compilation_cache() -> None:
    """Turn on the caches that let the next process load programs instead of compiling them,
    unless ``DMLSIM_COMPILATION_CACHE=0``: dmlsim's store of programs by structure
    (diskcache.py: ``programs`` beside JAX's directory, 1 GiB, which skips tracing too), and
    JAX's persistent compilation cache unless the application configured one already (programs
    taking 0.1 s or more to compile, at most 2 GiB, least recently used first out: JAX's own
    eviction)."""
    path = compilation_cache_dir()
    if path is None:
        settings.programs = None
        return
    explicit = bool(os.environ.get("DMLSIM_CACHE_DIR"))
    settings.programs = ProgramStore(os.path.join(path if explicit else os.path.dirname(path),
                                                  "programs"))
    if jax.config.jax_compilation_cache_dir:
        return
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
    jax.config.update("jax_compilation_cache_max_size", 2 << 30)
    log.info("dmlsim: JAX's persistent compilation cache is in %s (DMLSIM_COMPILATION_CACHE=0 "
             "turns it off)", path)


def enable_x64() -> None:
    if settings.x64 and not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
        log.info("dmlsim: turned on jax_enable_x64 so that INT64/UINT64/FLOAT64 tensors are exact "
                 "(set DMLSIM_X64=0 before import to keep JAX's setting)")
