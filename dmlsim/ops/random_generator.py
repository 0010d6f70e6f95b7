"""DML_OPERATOR_RANDOM_GENERATOR (FL 3_0): uniformly distributed random bits, Philox 4x32-10.

InputStateTensor is UINT32 { [1,...,] 6 }: elements 0..3 a 128-bit counter (element 0 the
least significant word, as Random123's ctr[0]), elements 4..5 the 64-bit key (key[0],
key[1]). Block j of four outputs is philox4x32_10(counter + j, key); OutputTensor (UINT32,
any size) takes the blocks' words in row-major order, the last block's surplus words
unused. OutputStateTensor, when bound, is the input state with the counter advanced by
ceil(outputSize / 4) (128-bit, carrying), the page's rule, so feeding it back continues the
same stream. The algorithm is the one of Salmon et al. (SC11), checked against Random123's
known-answer vectors; the reference is a Python-integer implementation written apart from
the kernel. The page's "Hello..." counter example is not arithmetic (its result is smaller
than its start) and is not used. Type must be DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 (0).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_sizes

ST, OUT, OST = "InputStateTensor", "OutputTensor", "OutputStateTensor"
M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def _add128(words, j):
    """(4 uint32 arrays) + j (a uint64 array): the counter of block j, with carries."""
    out, carry = [], j.astype(jnp.uint64)
    for w in words:
        s = w.astype(jnp.uint64) + (carry & MASK)
        out.append((s & MASK).astype(jnp.uint32))
        carry = (carry >> 32) + (s >> 32)
    return out


def philox(c, k0, k1):
    """Ten Philox-4x32 rounds on the counter words ``c`` with key (k0, k1) (JAX uint32)."""
    for r in range(10):
        if r:
            k0, k1 = k0 + jnp.uint32(W0), k1 + jnp.uint32(W1)
        p0 = c[0].astype(jnp.uint64) * M0
        p1 = c[2].astype(jnp.uint64) * M1
        hi0, lo0 = (p0 >> 32).astype(jnp.uint32), p0.astype(jnp.uint32)
        hi1, lo1 = (p1 >> 32).astype(jnp.uint32), p1.astype(jnp.uint32)
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c


def random_generator(InputStateTensor, *, Type, ctx):
    s = InputStateTensor.reshape(-1)
    out = ctx.outputs[OUT]
    blocks = -(-out.count // 4)
    ctr = _add128([s[i] for i in range(4)], jnp.arange(blocks, dtype=jnp.uint64))
    words = jnp.stack(philox(ctr, s[4], s[5]), axis=-1).reshape(-1)[:out.count]
    state = None
    if ctx.outputs.get(OST) is not None:
        nxt = _add128([s[i] for i in range(4)], jnp.asarray(blocks, jnp.uint64))
        state = jnp.concatenate([jnp.stack(nxt), s[4:6]]).reshape(ctx.outputs[OST].sizes)
    return words.reshape(out.sizes), state


def _philox_py(ctr, key):
    k0, k1 = key
    c = list(ctr)
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK]
    return c


def random_generator_reference(InputStateTensor, *, Type, ctx):
    s = [int(v) for v in np.asarray(InputStateTensor).reshape(-1)]
    counter = s[0] | s[1] << 32 | s[2] << 64 | s[3] << 96
    out = ctx.outputs[OUT]
    blocks = -(-out.count // 4)
    words = []
    for j in range(blocks):
        c = (counter + j) % (1 << 128)
        words += _philox_py([(c >> (32 * i)) & MASK for i in range(4)], s[4:6])
    y = np.array(words[:out.count], np.uint32).reshape(out.sizes)
    nxt = (counter + blocks) % (1 << 128)
    state = np.array([(nxt >> (32 * i)) & MASK for i in range(4)] + s[4:6], np.uint32)
    return y, (state.reshape(ctx.outputs[OST].sizes) if ctx.outputs.get(OST) else None)


def random_sizes(spec, check):
    st, out = spec.tensor[ST], spec.tensor.get(OUT)
    if st.count != 6 or st.sizes[-1] != 6:
        check.fail(f"InputStateTensor.Sizes is {list(st.sizes)}; the PHILOX_4X32_10 state is 6 "
                   "UINT32 values, Sizes [1, ..., 1, 6]")
    if spec.attr["Type"] != 0:
        check.fail(f"Type is {spec.attr['Type']}, which is not a DML_RANDOM_GENERATOR_TYPE "
                   "(0 PHILOX_4X32_10)")
    if out is None:
        check.fail("OutputTensor's Sizes (any size) are the desc's; give its tensor desc")
    return {OUT: Sizes(out.sizes, "OutputTensor"), OST: Sizes(st.sizes, "InputStateTensor")}


def u32(*v):
    return np.array(v, np.uint32)


register(OperatorDef(
    "DML_OPERATOR_RANDOM_GENERATOR", random_generator, random_generator_reference,
    output_sizes=random_sizes, rules=(same_sizes(ST, OST),), examples=(
        Example({ST: u32(0, 0, 0, 0, 0, 0)},
                {OUT: u32(0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8),
                 OST: u32(1, 0, 0, 0, 0, 0)}, {"Type": 0},
                "Random123's known answer for counter 0, key 0; the counter advances by 1"),
        Example({ST: u32(*[0xFFFFFFFF] * 6)},
                {OUT: u32(0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
                 OST: u32(0, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF)},
                {"Type": 0}, "the all-ones known answer; the 128-bit counter wraps to 0"),
        Example({ST: u32(0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822,
                         0x299F31D0)},
                {OUT: u32(0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)}, {"Type": 0},
                "the known answer for the digits of pi; no OutputStateTensor"),
    ), module=__name__))
