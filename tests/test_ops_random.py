"""RANDOM_GENERATOR's stream across dispatches: feeding OutputStateTensor back gives the same
values as one larger dispatch (the page: each group of 4 outputs uses one counter value, and
the state advances by the number of groups), including carries across the 128-bit counter's
32-bit words and a partial last group."""
from __future__ import annotations

import numpy as np

import dmlsim as dml

KEY = (0x12345678, 0x9ABCDEF0)


def generate(state, n):
    state = np.asarray(state, np.uint32)
    desc = dml.operator_desc("RANDOM_GENERATOR", InputStateTensor=state,
                             OutputTensor=np.zeros(n, np.uint32),
                             OutputStateTensor=np.zeros(6, np.uint32), Type=0)
    out, new_state = dml.run(desc, state)
    return np.asarray(out), np.asarray(new_state)


def test_feeding_the_state_back_continues_the_stream_across_word_carries():
    start = np.array([0xFFFFFFFE, 0xFFFFFFFF, 0, 0, *KEY], np.uint32)
    whole, end = generate(start, 12)
    parts, state = [], start
    for _ in range(3):
        y, state = generate(state, 4)
        parts.append(y)
    assert np.array_equal(np.concatenate(parts), whole)
    assert np.array_equal(state, end)
    # 0xFFFFFFFE + 3 carries out of words 0 and 1 into word 2
    assert end.tolist() == [1, 0, 1, 0, *KEY]
    assert len(set(whole.tolist())) == 12  # three distinct counters, not one block repeated


def test_a_partial_group_uses_a_whole_counter():
    start = np.array([7, 0, 0, 0, *KEY], np.uint32)
    ten, end10 = generate(start, 10)
    twelve, end12 = generate(start, 12)
    assert np.array_equal(ten, twelve[:10])
    assert end10.tolist() == end12.tolist() == [10, 0, 0, 0, *KEY]  # ceil(10 / 4) = 3
