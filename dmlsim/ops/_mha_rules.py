"""The shape rule of the multi-head attention operators (``_attention`` has the layouts):
the sources of Query, Key and Value, the head counts, bias, past, relative position bias and
mask shapes, and the output sizes."""
from __future__ import annotations

from .._core.hresult import E_NOTIMPL, fail
from .._core.registry import Sizes
from ._attention import BOOLEAN, K, KEY_END_START, KEY_LENGTH, KEY_QUERY, KV, NONE, Q, QK, QKV, V


def _lead_ones(check, field, t, n):
    if any(s != 1 for s in t.sizes[:len(t.sizes) - n]):
        check.fail(f"{field}.Sizes {list(t.sizes)}: the dimensions before the last {n} must be 1")
    return t.sizes[len(t.sizes) - n:]


def geometry(spec, check, hq, hkv):
    """(B, S, L, P, hs, vhs), checking the sources and head counts."""
    t = spec.tensor
    has = {f for f in (Q, K, V, QK, KV, QKV) if t.get(f) is not None}
    allowed = [{QKV}, {QK, V}, {Q, KV}, {Q, K, V}]
    if has not in allowed:
        check.fail(f"the Query, Key and Value sources given are {sorted(has) or 'none'}; give "
                   "exactly one of each: QueryTensor, KeyTensor and ValueTensor, or a stacked "
                   "QK, KV or QKV tensor in their place")
    if hq < 1 or hkv < 1 or hq % hkv:
        check.fail(f"the head counts are {hq} (query) and {hkv} (key/value); both at least 1, "
                   "the query count a multiple of the key/value count")
    if QKV in has:
        b, s, h, three, hs = t[QKV].sizes
        if three != 3 or h != hq or hq != hkv:
            check.fail(f"StackedQueryKeyValueTensor.Sizes {list(t[QKV].sizes)} must be [batch, "
                       f"sequence, {hq} heads, 3, head size]")
        return b, s, s, _past(spec, check, b, hkv, hs), hs, hs
    if QK in has:
        b, s, h, two, hs = t[QK].sizes
        l, vh = _lead_ones(check, V, t[V], 3)[1:]
        if two != 2 or h != hq or hq != hkv or vh % hkv:
            check.fail(f"StackedQueryKeyTensor.Sizes {list(t[QK].sizes)} must be [batch, "
                       f"sequence, {hq} heads, 2, head size] (and ValueTensor's hidden size a "
                       "multiple of the heads)")
        return b, s, l, _past(spec, check, b, hkv, hs), hs, vh // hkv
    b, s, qh = _lead_ones(check, Q, t[Q], 3)
    if qh % hq:
        check.fail(f"QueryTensor's hidden size {qh} is not a multiple of the {hq} query heads")
    hs = qh // hq
    if KV in has:
        b2, l, h, two, ks = t[KV].sizes
        if two != 2 or h != hkv or ks != hs or b2 != b:
            check.fail(f"StackedKeyValueTensor.Sizes {list(t[KV].sizes)} must be [{b}, key "
                       f"sequence, {hkv} heads, 2, {hs}]")
        return b, s, l, _past(spec, check, b, hkv, hs), hs, hs
    b2, l, kh = _lead_ones(check, K, t[K], 3)
    b3, l2, vh = _lead_ones(check, V, t[V], 3)
    if kh != hkv * hs or (b2, b3) != (b, b) or l2 != l or vh % hkv:
        check.fail(f"KeyTensor.Sizes {list(t[K].sizes)} and ValueTensor.Sizes "
                   f"{list(t[V].sizes)} must be [{b}, key sequence, {hkv} heads x {hs}] and "
                   f"[{b}, key sequence, {hkv} heads x value head size]")
    return b, s, l, _past(spec, check, b, hkv, hs), hs, vh // hkv


def _past(spec, check, b, hkv, hs):
    pk = spec.tensor.get("PastKeyTensor")
    pv = spec.tensor.get("PastValueTensor")
    if (pk is None) != (pv is None):
        check.fail("PastKeyTensor and PastValueTensor must be given together")
    if pk is None:
        return 0
    bb, h, p, d = _lead_ones(check, "PastKeyTensor", pk, 4)
    if (bb, h, d) != (b, hkv, hs):
        check.fail(f"PastKeyTensor.Sizes {list(pk.sizes)} must be [{b}, {hkv}, past sequence, "
                   f"{hs}]")
    return p


def attention_sizes(spec, check, hq, hkv):
    t = spec.tensor
    b, s, l, p, hs, vhs = geometry(spec, check, hq, hkv)
    if t.get("BiasTensor") is not None and t["BiasTensor"].count != (hq + hkv) * hs + hkv * vhs:
        check.fail(f"BiasTensor has {t['BiasTensor'].count} elements; it must have hiddenSize + "
                   f"hiddenSize + valueHiddenSize = {(hq + hkv) * hs + hkv * vhs}")
    rel = t.get("RelativePositionBiasTensor")
    if rel is not None and _lead_ones(check, "RelativePositionBiasTensor", rel, 4) != \
            (b, hq, s, p + l):
        check.fail(f"RelativePositionBiasTensor.Sizes {list(rel.sizes)} must be [{b}, {hq}, {s}, "
                   f"{p + l}]")
    _mask(spec, check, b, hq, s, p + l)
    sizes = {"OutputTensor": (b, s, hq * vhs), "OutputPresentKeyTensor": (b, hkv, p + l, hs),
             "OutputPresentValueTensor": (b, hkv, p + l, vhs)}
    out = {}
    for f, want in sizes.items():
        given = t.get(f)
        n = len(given.sizes) if given is not None else len(want)
        out[f] = Sizes((1,) * (n - len(want)) + want, "the Query, Key and Value tensors")
    return out


def _mask(spec, check, b, h, s, n):
    kind, mask = spec.attr["MaskType"], spec.tensor.get("MaskTensor")
    if kind not in (NONE, KEY_LENGTH, KEY_END_START, KEY_QUERY, BOOLEAN):
        check.fail(f"MaskType is {kind}, which is not a DML_MULTIHEAD_ATTENTION_MASK_TYPE")
    if kind == KEY_QUERY:
        fail(E_NOTIMPL, f"{spec.name}: MaskType KEY_QUERY_SEQUENCE_LENGTH_START_END is not "
                        "implemented in dmlsim: the page's layout of that mask is garbled")
    if (mask is None) != (kind == NONE):
        check.fail(f"MaskType is {kind} but MaskTensor is {'absent' if mask is None else 'given'}"
                   "; a mask needs a MaskType other than NONE, and only then")
    if kind == KEY_LENGTH and mask.count != b or kind == KEY_END_START and mask.count != 2 * b:
        check.fail(f"MaskTensor.Sizes {list(mask.sizes)}: this MaskType needs "
                   f"{'[1, batch]' if kind == KEY_LENGTH else '[2, batch]'} = "
                   f"{b if kind == KEY_LENGTH else 2 * b} elements")
    if kind == BOOLEAN:
        sizes = mask.sizes[max(0, len(mask.sizes) - 4):]
        want = (b, h, s, n)[4 - len(sizes):]
        if any(m not in (1, w) for m, w in zip(sizes, want)) or \
                any(v != 1 for v in mask.sizes[:len(mask.sizes) - 4]):
            check.fail(f"MaskTensor.Sizes {list(mask.sizes)} does not broadcast to [batch, heads, "
                       f"sequence, key sequence] = {[b, h, s, n]}")
