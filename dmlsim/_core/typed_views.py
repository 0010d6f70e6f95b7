"""The typed copies of a whole list's OWNED_BY_DML reads (``Plan.pins``): a persistent
resource's weights made once into arrays of their types, kept on the memory until its bytes
change, and passed to the program instead of being sliced out of the storage's words at every
execution. A view may ask for a dimension order (``Dispatchable.cpu_input_orders``: a
convolution's filter in the layout XLA's CPU convolutions read): its copy is made transposed
to it, once, and the program transposes it back, which XLA folds into the reader."""
from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .dtypes import calc_buffer_tensor_size
from .views import read_view

TYPED_VIEWS_PER_MEMORY = 4096  # typed copies one persistent resource keeps (typed_views)
# views of one shape (and byte offset within a word) read by a shared reader (_typed_reader)
SHARED_READER_VIEWS = 3


def typed_views(mem, views, cache) -> list:
    """The typed arrays of ``views`` ((byte offset, spec, dimension order or None) of device
    memory ``mem``): made once by one program, then kept on the memory until its bytes change
    (``stamp``). The same bits ``read_view`` reads (transposed to the order when there is one),
    copied out once instead of at every execution."""
    stamp = mem.stamp()
    held = mem.typed
    if held is None or held[0] != stamp:
        held = mem.typed = (stamp, {})
    got = held[1]
    try:
        return [got[v] for v in views]
    except KeyError:
        pass
    missing = tuple(v for v in views if v not in got)
    if len(got) + len(missing) > TYPED_VIEWS_PER_MEMORY:
        got.clear()
    # a view shape that recurs (a model's layers) gets a reader of its own taking the word
    # offset as an argument; the others are read by one program with their offsets constants
    shapes = collections.Counter((offset % 4, spec, order) for offset, spec, order in missing)
    rest = []
    for offset, spec, order in missing:
        word, rem = divmod(offset, 4)
        words = -(-(rem + calc_buffer_tensor_size(spec.data_type, spec.sizes,
                                                  spec.element_strides)) // 4)
        if shapes[(rem, spec, order)] < SHARED_READER_VIEWS or mem.words >= 2 ** 31 or \
                word + words > mem.words:
            rest.append((offset, spec, order))
            continue
        fn = cache.program(("typed view", mem.words, spec, rem, words, order),
                           lambda: _typed_reader(spec, rem, words, order))
        got[(offset, spec, order)] = fn(mem.array, np.int32(word))
    if rest:
        rest = tuple(rest)
        fn = cache.program(("typed views", mem.words, rest), lambda: _typed_program(rest))
        got.update(zip(rest, fn(mem.array)))
    return [got[v] for v in views]


def _ordered(value, order):
    return value if order is None else jnp.transpose(value, order)


@functools.lru_cache(maxsize=64)
def _typed_reader(spec, rem, words, order):
    """The jitted reader of one view shape's typed copies, the word offset an argument: a
    model's layers share a handful of weight shapes, each read by one small program, where one
    program with every offset a constant compiles a copy per weight (XLA on the 2-core CPU:
    about 40 ms a program plus 14 ms a copy; MiniLM's 37 weights 0.53 s in one program, 0.19 s
    as 5 readers; PaddleOCR rec's weights, of 13 shapes, 0.23 s in one program and 0.52 s as
    readers, hence SHARED_READER_VIEWS). One per shape in the process, so each new session or
    device on the model compiles nothing."""
    @jax.jit
    def typed(storage, word):
        return _ordered(read_view(lax.dynamic_slice(storage, (word,), (words,)), spec, rem),
                        order)
    return typed


@functools.lru_cache(maxsize=64)
def _typed_program(views):
    """The jitted reader of ``views``, their offsets constants: the views of shapes that do
    not recur, and any in a storage of 2^31 words or more (an int32 holds no such offset)."""
    @jax.jit
    def typed(storage):
        return tuple(_ordered(read_view(storage, spec, offset), order)
                     for offset, spec, order in views)
    return typed


def in_order(value, order):
    """A typed copy made in dimension ``order``, transposed back to its desc's order (inside
    a program: XLA folds the transpose into the reader, which wanted that layout)."""
    return value if order is None else jnp.transpose(value, tuple(int(d) for d in
                                                                  np.argsort(order)))
