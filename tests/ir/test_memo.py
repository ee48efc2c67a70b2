"""IdentityMemo: a fact is remembered for the very object it was computed for, never for an
equal copy, and a full memo starts over instead of growing."""

from __future__ import annotations

from ptoc.ir.memo import MISSING, IdentityMemo
from ptoc.ir.nodes import ConstInt


def test_a_value_belongs_to_the_object_not_to_an_equal_one():
    memo = IdentityMemo(10)
    a, b = tuple([1, 2]), tuple([1, 2])
    assert a == b and a is not b
    memo.put(a, "checked")
    assert memo.get(a) == "checked"
    assert memo.get(b) is MISSING


def test_a_full_memo_starts_over():
    memo = IdentityMemo(3)
    kept = [ConstInt(i) for i in range(4)]
    for node in kept[:3]:
        memo.put(node, True)
    assert len(memo) == 3
    memo.put(kept[3], True)
    assert len(memo) == 1 and memo.get(kept[0]) is MISSING and memo.get(kept[3]) is True
