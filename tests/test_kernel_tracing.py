"""Kernels are traced with jit off (``OperatorDef.run``): jax.numpy's functions then add their
operations to the program directly instead of each tracing and lowering a nested program. A
kernel's loops go through ``registry.loop``, which turns jit back on for them, so a loop stays
one loop instead of one copy of its body per iteration."""
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import dmlsim as dml
from dmlsim._core.registry import loop

OPS = Path(dml.__file__).resolve().parent / "ops"


def _count(jaxpr, name):
    return sum(e.primitive.name == name for e in jaxpr.jaxpr.eqns)


def test_a_loop_stays_a_loop_when_kernels_trace_with_jit_off():
    def body(i, c):
        return c * 2.0 + 1.0

    def through_loop(x):
        with jax.disable_jit():
            return loop(lax.fori_loop, 0, 16, body, x)

    def bare(x):
        with jax.disable_jit():
            return lax.fori_loop(0, 16, body, x)

    x = jnp.ones(3, jnp.float32)
    kept = jax.make_jaxpr(through_loop)(x)
    assert _count(kept, "scan") + _count(kept, "while") == 1 and _count(kept, "mul") == 0
    unrolled = jax.make_jaxpr(bare)(x)  # what loop() prevents
    assert _count(unrolled, "scan") + _count(unrolled, "while") == 0 and _count(unrolled, "mul") == 16
    np.testing.assert_array_equal(jax.jit(through_loop)(x), np.full(3, 2.0 ** 17 - 1))


def test_every_kernel_loop_goes_through_registry_loop():
    bare = []
    for path in sorted(OPS.glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"(?<!loop\()\blax\.(scan|fori_loop|while_loop|map|associative_scan)\(",
                         line):
                bare.append(f"{path.name}:{n}: {line.strip()}")
    assert bare == []

