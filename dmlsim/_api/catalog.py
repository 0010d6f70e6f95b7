"""What dmlsim implements: operators with feature levels, and the emulated device."""
from __future__ import annotations

from .._core import config, registry
from .._schema.operators_generated import OPERATORS


def supported_operators() -> list:
    """[(operator name, introduced DML_FEATURE_LEVEL value)] for every operator dmlsim
    implements, sorted by name. Every other DML_OPERATOR_TYPE raises E_NOTIMPL."""
    return [(n, OPERATORS[n]["introduced"]) for n in registry.names()]


def info() -> dict:
    """The emulated device: feature level, JAX backend and devices, 64-bit mode, strict mode."""
    import jax
    return {
        "feature_level": config.fl_name(config.settings.feature_level),
        "jax_version": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
        "strict": config.settings.strict,
        "operators_implemented": len(registry.names()),
        "operators_in_spec": len(OPERATORS),
    }
